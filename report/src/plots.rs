//! The report's plots: each drawn once per backend, as SVG (text left to the viewer, no font
//! needed) and, when a font is registered, as PNG (plotters' bitmap backend, encoded with
//! `png`).
//!
//! Owns: the list of plots and the two renderings; `look` holds their shared look (palette,
//! title, legend, text sizes) and each other module one picture. Must not: use plotters helpers
//! that measure text with the font (captions, series legends), so the SVGs draw the same on a
//! machine with no font at all; text is placed by estimate instead.

mod capabilities;
mod curves;
mod friction;
mod frontier;
mod glyphs;
mod look;
mod outcomes;
mod promotion;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::fonts::Font;
use crate::tables::Results;

pub use look::DrawError;

/// One plot of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plot {
    /// Prompt rate per window: projects faint, median and p25–p75 band bold.
    Curves,
    /// Prompt rate against misses, frontier joined, recommendation and baselines labelled.
    Frontier,
    /// Outcome classes per setting, as shares of calls.
    Outcomes,
    /// Shares of the history's actions by capability, across projects.
    Capabilities,
    /// Prompts by reason code.
    Friction,
    /// Time from first sighting to promotion.
    Promotion,
}

impl Plot {
    /// Every plot, in the order the pages show them.
    pub const ALL: [Plot; 6] = [
        Plot::Curves,
        Plot::Frontier,
        Plot::Outcomes,
        Plot::Capabilities,
        Plot::Friction,
        Plot::Promotion,
    ];

    /// The file stem: `plots/<name>.svg` and `.png`.
    pub fn name(self) -> &'static str {
        match self {
            Plot::Curves => "learning-curves",
            Plot::Frontier => "frontier",
            Plot::Outcomes => "outcomes",
            Plot::Capabilities => "capabilities",
            Plot::Friction => "friction",
            Plot::Promotion => "time-to-promotion",
        }
    }

    /// The heading the pages give it.
    pub fn title(self) -> &'static str {
        match self {
            Plot::Curves => "Learning curves",
            Plot::Frontier => "Prompts against misses",
            Plot::Outcomes => "What each setting would have done",
            Plot::Capabilities => "What the agents did: capability mix",
            Plot::Friction => "Friction budget: why it still asks",
            Plot::Promotion => "Time to promotion",
        }
    }

    /// How to read it, for the pages.
    pub fn caption(self) -> &'static str {
        match self {
            Plot::Curves => {
                "How often each setting would have asked as a project's history grows, in \
                 windows of calls. Each faint line is one project; the bold line is the median \
                 across projects and the shaded band the 25th to 75th percentile (drawn where at \
                 least two projects have a window). Baselines do not learn, so their curves stay \
                 flat."
            }
            Plot::Frontier => {
                "Every setting by how often it asks (x) and how many calls you had refused it \
                 would have let through (y). Lower left is better; the line joins the frontier, \
                 the settings nothing else beats on both. The ring marks the recommendation; the \
                 dashed line is the miss budget."
            }
            Plot::Outcomes => {
                "Each call of the history classed per setting: saved (let through, and it ran), \
                 friction (asked, and you approved), catches (asked or blocked, and you had \
                 refused), misses (let through, but you had refused), false blocks (blocked what \
                 you approved) and unlabeled (no answer in the history). Counts of misses (and \
                 how many of them were risky) and catches on the right."
            }
            Plot::Capabilities => {
                "Every action in the history (a compound shell command is several) by its \
                 capability, as a share of all actions across projects: what the agents spent \
                 their calls on, and so where prompts and learning matter most. No setting \
                 changes it. Counts and shares at the end of each bar; past fourteen rows the \
                 rest are summed as other."
            }
            Plot::Friction => {
                "The prompts of the recommended setting and the frontier's other enforcing \
                 settings, by the reason code of the action that asked: floors (never learned \
                 away), gaps (not enough evidence yet) and taint."
            }
            Plot::Promotion => {
                "How long a routine call took to stop asking: time from its first sighting in \
                 a project to the moment learning allowed it, counted per promoted signature."
            }
        }
    }

    /// Width and height in pixels.
    pub fn size(self, results: &Results) -> (u32, u32) {
        match self {
            Plot::Curves => curves::size(results),
            Plot::Frontier => (1200, 720),
            Plot::Outcomes => outcomes::size(results),
            Plot::Capabilities => capabilities::size(results),
            Plot::Friction => friction::size(results),
            Plot::Promotion => (1200, 680),
        }
    }

    /// Draws the plot on a blank area of [`Plot::size`].
    pub fn draw<DB: DrawingBackend>(
        self,
        root: &DrawingArea<DB, Shift>,
        results: &Results,
    ) -> Result<(), DrawError> {
        root.fill(&WHITE)?;
        match self {
            Plot::Curves => curves::draw(root, results),
            Plot::Frontier => frontier::draw(root, results),
            Plot::Outcomes => outcomes::draw(root, results),
            Plot::Capabilities => capabilities::draw(root, results),
            Plot::Friction => friction::draw(root, results),
            Plot::Promotion => promotion::draw(root, results),
        }
    }

    /// The plot as an SVG document.
    pub fn svg(self, results: &Results) -> Result<String, DrawError> {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, self.size(results)).into_drawing_area();
            self.draw(&root, results)?;
            root.present()?;
        }
        Ok(out)
    }

    /// The plot as PNG bytes, its text drawn with `font`.
    pub fn png(self, results: &Results, font: &Font) -> Result<Vec<u8>, DrawError> {
        let (w, h) = self.size(results);
        let mut pixels = vec![255u8; w as usize * h as usize * 3];
        {
            let root = glyphs::GlyphBackend::new(&mut pixels, (w, h), font.face.clone())
                .into_drawing_area();
            self.draw(&root, results)?;
            root.present()?;
        }
        let mut out = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut out, w, h);
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            let mut writer = encoder
                .write_header()
                .map_err(|e| DrawError(e.to_string()))?;
            writer
                .write_image_data(&pixels)
                .map_err(|e| DrawError(e.to_string()))?;
        }
        Ok(out)
    }
}
