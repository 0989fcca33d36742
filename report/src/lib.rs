//! Plots and the report bundle (HTML, Markdown) from the replay's Parquet output.
//!
//! Owns: reading replay output ([`tables`], with every name it reads in [`columns`]) and turning
//! it into pictures and pages a person can act on: six plots as SVG and PNG ([`plots`]), one
//! self-contained `index.html` ([`html`]) and a `report.md` beside it ([`markdown`]).
//!
//! Must not: recompute decisions or depend on the engine, the ingest or the replay crate: it
//! reads their published tables only (`docs/formats.md`), so a report can be drawn from results
//! another version wrote. Must not fail for want of a font: text in PNGs needs a TrueType font
//! found at run time ([`fonts`]); without one every SVG is still written and the PNGs are
//! skipped with a note.
//!
//! ```no_run
//! let written = leastgrant_report::write_report(
//!     std::path::Path::new("replay"),
//!     std::path::Path::new("replay/report"),
//! )?;
//! println!("{}", written.index.display());
//! # Ok::<(), leastgrant_report::ReportError>(())
//! ```

pub mod columns;
mod error;
mod files;
pub mod fonts;
mod html;
mod markdown;
pub mod plots;
pub mod tables;
mod text;

use std::path::{Path, PathBuf};

pub use error::ReportError;
pub use fonts::FontChoice;
use plots::Plot;

/// What the report needs besides its input and output directories.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The font for the PNGs' text.
    pub font: FontChoice,
}

/// What [`write_report`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// `index.html`: open this.
    pub index: PathBuf,
    /// `report.md`.
    pub markdown: PathBuf,
    /// Every file written, pages first, then each plot's SVG and PNG.
    pub files: Vec<PathBuf>,
    /// The font the PNGs were drawn with; `None` when the PNGs were skipped.
    pub font: Option<PathBuf>,
    /// What a person should know: PNGs skipped and why, plots that could not be drawn.
    pub notes: Vec<String>,
}

/// The directory under the output that holds the plots.
pub const PLOTS_DIR: &str = "plots";

/// Reads the replay's results in `results` and writes the report to `out`: `index.html`,
/// `report.md` and `plots/<name>.svg` and `.png`. PNGs use the first TrueType font found on this
/// machine (or `$LEASTGRANT_FONT`); without one they are skipped with a note in
/// [`Written::notes`] and on the pages.
pub fn write_report(results: &Path, out: &Path) -> Result<Written, ReportError> {
    write_report_with(results, out, &Options::default())
}

/// [`write_report`] with options.
pub fn write_report_with(
    results: &Path,
    out: &Path,
    options: &Options,
) -> Result<Written, ReportError> {
    let data = tables::read(results)?;
    let mut notes = Vec::new();
    let font = match fonts::prepare(&options.font) {
        Ok(font) => Some(font),
        Err(why) => {
            notes.push(format!("PNGs skipped: {why}; the SVGs have every plot"));
            None
        }
    };
    files::create_dir(out)?;
    let plots_dir = out.join(PLOTS_DIR);
    files::create_dir(&plots_dir)?;
    let mut rendered = Vec::new();
    let mut plot_files = Vec::new();
    for plot in Plot::ALL {
        let svg = match plot.svg(&data) {
            Ok(svg) => svg,
            Err(e) => {
                notes.push(format!(
                    "the {} plot could not be drawn: {}",
                    plot.name(),
                    e.0
                ));
                continue;
            }
        };
        let svg_path = plots_dir.join(format!("{}.svg", plot.name()));
        files::write(&svg_path, svg.as_bytes())?;
        plot_files.push(svg_path);
        let png_path = plots_dir.join(format!("{}.png", plot.name()));
        let mut has_png = false;
        if let Some(font) = &font {
            match plot.png(&data, font) {
                Ok(bytes) => {
                    files::write(&png_path, &bytes)?;
                    plot_files.push(png_path.clone());
                    has_png = true;
                }
                Err(e) => notes.push(format!(
                    "the {} PNG could not be drawn: {}",
                    plot.name(),
                    e.0
                )),
            }
        }
        if !has_png {
            // A PNG left from an earlier report would show something else.
            files::remove_stale(&png_path)?;
        }
        rendered.push(html::Figure { plot, svg, has_png });
    }
    let index = out.join("index.html");
    files::write(&index, html::page(&data, &rendered, &notes).as_bytes())?;
    let markdown = out.join("report.md");
    files::write(
        &markdown,
        markdown::page(&data, &rendered, &notes).as_bytes(),
    )?;
    let mut written = vec![index.clone(), markdown.clone()];
    written.extend(plot_files);
    Ok(Written {
        index,
        markdown,
        files: written,
        font: font.map(|f| f.path),
        notes,
    })
}
