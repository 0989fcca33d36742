//! The TrueType font the PNGs' text is drawn with: found on this machine at run time and
//! registered with plotters (its `ab_glyph` feature draws text from font bytes it is given and
//! needs no system library; docs/decisions.md).
//!
//! Owns: where to look (`$LEASTGRANT_FONT`, the usual Debian, Fedora, Arch and macOS places,
//! then any TrueType file under the font directories) and the one registration per process.
//! Must not: ship font data (none is committed to the repository) or fail the report: without a
//! font the SVGs are still written and the PNGs are skipped with a note.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ab_glyph::FontRef;
use plotters::style::{FontStyle, register_font};

/// The family name plots ask for; the registered font answers to it.
pub const FAMILY: &str = "sans-serif";

/// Environment variable naming a font file to use.
pub const FONT_ENV: &str = "LEASTGRANT_FONT";

/// Well-known files, best first: a sans-serif regular face.
const KNOWN: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
    "/System/Library/Fonts/Geneva.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Directories searched (recursively, a bounded number of entries) when no known file exists.
const DIRS: &[&str] = &[
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "/System/Library/Fonts",
    "/Library/Fonts",
];

/// Files looked at per directory tree at most, so a huge font collection cannot stall a report.
const WALK_LIMIT: usize = 20_000;

/// Which font the PNGs use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FontChoice {
    /// `$LEASTGRANT_FONT`, else the first usable font found on this machine.
    #[default]
    Discover,
    /// This file (the PNGs are skipped with a note if it cannot be used).
    File(PathBuf),
    /// No font: write the SVGs only.
    None,
}

/// A font ready to draw with: registered with plotters (which measures text with it) and parsed
/// for the PNG backend (which draws it).
#[derive(Clone)]
pub struct Font {
    /// The file it came from.
    pub path: PathBuf,
    /// The parsed face.
    pub face: FontRef<'static>,
}

impl std::fmt::Debug for Font {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Font").field("path", &self.path).finish()
    }
}

/// The font registered in this process, if any (plotters keeps one per family, process-wide).
static REGISTERED: Mutex<Option<Font>> = Mutex::new(None);

/// Finds and registers the font for `choice`, or says why there is none.
pub fn prepare(choice: &FontChoice) -> Result<Font, String> {
    match choice {
        FontChoice::None => Err("no font was wanted".into()),
        FontChoice::File(path) => register(path),
        FontChoice::Discover => {
            if let Some(path) = std::env::var_os(FONT_ENV).filter(|p| !p.is_empty()) {
                let path = PathBuf::from(path);
                return register(&path).map_err(|e| format!("${FONT_ENV}: {e}"));
            }
            let known = KNOWN.iter().map(PathBuf::from).filter(|p| p.is_file());
            // The walk happens only when no well-known file is there.
            for path in known.chain(std::iter::once_with(walked).flatten()) {
                if let Ok(font) = register(&path) {
                    return Ok(font);
                }
            }
            Err(format!(
                "no TrueType font was found (looked in {}; install one, e.g. Debian's \
                 `fonts-dejavu-core`, or name a .ttf file in ${FONT_ENV})",
                DIRS.join(", ")
            ))
        }
    }
}

/// What a walk of the font directories finds, sans regular faces first.
fn walked() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs: Vec<PathBuf> = DIRS.iter().map(PathBuf::from).collect();
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        dirs.push(home.join(".local/share/fonts"));
        dirs.push(home.join(".fonts"));
        dirs.push(home.join("Library/Fonts"));
    }
    for dir in dirs {
        walk(&dir, &mut found, &mut 0);
    }
    found.sort_by_key(|p| (rank(p), p.clone()));
    found
}

/// Lower is better: a sans regular face over bold, italic, mono or symbol faces.
fn rank(path: &Path) -> u8 {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let styled = [
        "bold", "italic", "oblique", "mono", "symbol", "emoji", "math",
    ]
    .iter()
    .any(|s| name.contains(s));
    match (name.contains("sans"), styled) {
        (true, false) => 0,
        (false, false) => 1,
        (true, true) => 2,
        (false, true) => 3,
    }
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>, seen: &mut usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        *seen += 1;
        if *seen > WALK_LIMIT {
            return;
        }
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&path, found, seen);
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("ttf") || e.eq_ignore_ascii_case("otf"))
        {
            found.push(path);
        }
    }
}

/// Registers the font at `path` under [`FAMILY`], once per path per process (plotters needs the
/// bytes for the life of the process, so they are kept).
fn register(path: &Path) -> Result<Font, String> {
    let mut registered = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(font) = registered.as_ref().filter(|f| f.path == path) {
        return Ok(font.clone());
    }
    let unusable = || format!("`{}` is not a usable TrueType font", path.display());
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    // Checked before the bytes are kept for the life of the process.
    FontRef::try_from_slice(&bytes).map_err(|_| unusable())?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    let face = FontRef::try_from_slice(bytes).map_err(|_| unusable())?;
    register_font(FAMILY, FontStyle::Normal, bytes).map_err(|_| unusable())?;
    let font = Font {
        path: path.to_path_buf(),
        face,
    };
    *registered = Some(font.clone());
    Ok(font)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sans_regular_faces_come_first() {
        let mut paths: Vec<PathBuf> = [
            "/f/DejaVuSansMono.ttf",
            "/f/DejaVuSerif.ttf",
            "/f/DejaVuSans-Bold.ttf",
            "/f/DejaVuSans.ttf",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        paths.sort_by_key(|p| (rank(p), p.clone()));
        assert_eq!(paths[0], PathBuf::from("/f/DejaVuSans.ttf"));
        assert_eq!(paths[1], PathBuf::from("/f/DejaVuSerif.ttf"));
    }

    #[test]
    fn the_walk_finds_font_files_in_subdirectories() {
        let dir = std::env::temp_dir().join(format!("font-walk-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("truetype/x")).unwrap();
        std::fs::write(dir.join("truetype/x/Some-Sans.TTF"), b"").unwrap();
        std::fs::write(dir.join("truetype/readme.txt"), b"").unwrap();
        std::fs::write(dir.join("Other.otf"), b"").unwrap();
        let mut found = Vec::new();
        walk(&dir, &mut found, &mut 0);
        found.sort();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            found,
            vec![dir.join("Other.otf"), dir.join("truetype/x/Some-Sans.TTF")]
        );
    }

    #[test]
    fn a_file_that_is_not_a_font_is_refused_with_its_name() {
        let path = std::env::temp_dir().join(format!("not-a-font-{}.ttf", std::process::id()));
        std::fs::write(&path, b"hello").unwrap();
        let err = prepare(&FontChoice::File(path.clone())).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert!(err.contains("not a usable TrueType font"), "{err}");
    }
}
