//! Writing the report's files: owner-only (misses quote commands from the history, which may
//! hold secrets), each replaced atomically so a reader never sees half a page.
//!
//! Owns: directory creation, atomic replacement and stale-file removal. Must not: decide what
//! is written.

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::error::ReportError;

fn fail(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates `dir` and its parents; a directory created here is owner-only.
pub fn create_dir(dir: &Path) -> Result<(), ReportError> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(fail(dir))
}

/// Writes `bytes` to `path` through a staged file renamed into place, owner-only.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let staged = path.with_file_name(format!(".{name}.{}.partial", std::process::id()));
    let result = (|| {
        let mut options = fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&staged)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&staged, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&staged);
    }
    result.map_err(fail(path))
}

/// Removes a file left by an earlier report, if there is one.
pub fn remove_stale(path: &Path) -> Result<(), ReportError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(fail(path)(e)),
    }
}
