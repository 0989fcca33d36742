//! Why no report was written: the one error type of the crate, below every module that
//! returns it.

use std::fmt;
use std::path::PathBuf;

/// Why no report was written.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReportError {
    /// The results directory is missing or holds no replay output.
    NoResults {
        /// The directory given.
        dir: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A results file could not be read or is not what `docs/formats.md` says.
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        why: String,
    },
    /// An output file could not be written.
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::NoResults { dir, why } => write!(
                f,
                "no replay results in `{}`: {why} (run `leastgrant simulate` first, or name \
                 its output with --results)",
                dir.display()
            ),
            ReportError::Read { path, why } => {
                write!(f, "cannot read `{}`: {why}", path.display())
            }
            ReportError::Write { path, source } => {
                write!(f, "cannot write `{}`: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}
