//! The report's plots: each drawn once per backend, as SVG (text left to the viewer, no font
//! needed) and, when a font is registered, as PNG (plotters' bitmap backend, encoded with
//! `png`).
//!
//! Owns: the list of plots, their shared look (palette, title, legend, text sizes) and the two
//! renderings. Each plot module owns one picture. Must not: use plotters helpers that measure
//! text with the font (captions, series legends), so the SVGs draw the same on a machine with
//! no font at all; text is placed by estimate instead.

mod capabilities;
mod curves;
mod friction;
mod frontier;
mod glyphs;
mod outcomes;
mod promotion;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::fonts::{FAMILY, Font};
use crate::tables::Results;

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
                 you approved) and unlabeled (no answer in the history). Counts of misses and \
                 catches on the right."
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

/// A plot that could not be drawn, in plotters' words.
#[derive(Debug)]
pub struct DrawError(pub String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        DrawError(e.to_string())
    }
}

/// The result of drawing.
pub type Drawn = Result<(), DrawError>;

/// The frame of a horizontal bar chart: `rows` bands over `0..x_end`, the value axis at the
/// bottom with gridlines, no horizontal grid, room on the left for the row labels and on the
/// right for the values the caller writes there.
pub struct BarFrame<'a> {
    /// Room on the right, in pixels.
    pub margin_right: u32,
    /// Room on the left for the row labels, in pixels.
    pub label_width: u32,
    /// The value axis's end.
    pub x_end: f64,
    /// Bands, top to bottom.
    pub rows: usize,
    /// The value axis's label, with its unit.
    pub x_desc: &'a str,
    /// Ticks on the value axis.
    pub x_labels: usize,
    /// How a tick reads.
    pub x_format: &'a dyn Fn(&f64) -> String,
}

impl BarFrame<'_> {
    /// Draws the frame; the bars and their labels are the caller's.
    pub fn draw<'b, DB: DrawingBackend>(
        &self,
        body: &'b DrawingArea<DB, Shift>,
    ) -> Result<ChartContext<'b, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, DrawError> {
        let mut chart = ChartBuilder::on(body)
            .margin_top(8)
            .margin_left(12)
            .margin_right(self.margin_right)
            .margin_bottom(10)
            .x_label_area_size(60)
            .y_label_area_size(self.label_width)
            .build_cartesian_2d(0f64..self.x_end, 0f64..self.rows as f64)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .disable_y_mesh()
            .axis_style(MUTED)
            .label_style(font(15.0, MUTED))
            .axis_desc_style(font(16.0, INK))
            .x_desc(self.x_desc)
            .x_labels(self.x_labels)
            .y_labels(0)
            .x_label_formatter(self.x_format)
            .draw()?;
        Ok(chart)
    }
}

// The palette: Okabe–Ito, distinguishable with the common colour-vision deficiencies.
/// Text.
pub const INK: RGBColor = RGBColor(34, 34, 34);
/// Secondary text and axes.
pub const MUTED: RGBColor = RGBColor(105, 105, 105);
/// Grid lines.
pub const GRID: RGBColor = RGBColor(228, 228, 228);
/// Blue.
pub const BLUE_: RGBColor = RGBColor(0, 114, 178);
/// Orange.
pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
/// Bluish green.
pub const GREEN_: RGBColor = RGBColor(0, 158, 115);
/// Vermillion.
pub const VERMILLION: RGBColor = RGBColor(213, 94, 0);
/// Reddish purple.
pub const PURPLE: RGBColor = RGBColor(204, 121, 167);
/// Sky blue.
pub const SKY: RGBColor = RGBColor(86, 180, 233);
/// Grey for baselines and the unlabeled.
pub const GREY: RGBColor = RGBColor(150, 150, 150);

/// Colours of the focus settings, in `Results::focus` order.
pub const FOCUS: [RGBColor; 3] = [BLUE_, ORANGE, GREEN_];

/// Text of `size` pixels in `color`.
pub fn font(size: f64, color: RGBColor) -> TextStyle<'static> {
    styled(size, FontStyle::Normal, color)
}

/// Bold text (drawn regular in PNGs: one face is registered).
pub fn bold(size: f64, color: RGBColor) -> TextStyle<'static> {
    styled(size, FontStyle::Bold, color)
}

fn styled(size: f64, style: FontStyle, color: RGBColor) -> TextStyle<'static> {
    let mut text = TextStyle::from(FontDesc::new(FontFamily::Name(FAMILY), size, style));
    text.color = color.to_backend_color();
    text
}

/// Text anchored at `h`, `v`.
pub fn anchored(style: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    style.pos(Pos::new(h, v))
}

/// The width of `text` in pixels: measured with the font when one is registered, else
/// estimated (sans-serif averages about 0.55 em per character).
pub fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
) -> i32 {
    area.estimate_text_size(text, style)
        .map(|(w, _)| w as i32)
        .unwrap_or_else(|_| (text.chars().count() as f64 * style.font.get_size() * 0.55) as i32)
}

/// Draws the title and subtitle at the top; returns the area below them.
pub fn header<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
) -> Result<DrawingArea<DB, Shift>, DrawError> {
    root.draw(&Text::new(
        title.to_string(),
        (24, 16),
        anchored(bold(26.0, INK), HPos::Left, VPos::Top),
    ))?;
    if !subtitle.is_empty() {
        root.draw(&Text::new(
            subtitle.to_string(),
            (24, 50),
            anchored(font(17.0, MUTED), HPos::Left, VPos::Top),
        ))?;
    }
    Ok(root.split_vertically(80).1)
}

/// A legend entry's mark.
#[derive(Clone, Copy)]
pub enum Swatch {
    /// A filled square.
    Fill(RGBAColor),
    /// A line of this width.
    Line(RGBAColor, u32),
}

/// Draws a one-line legend starting at (`x`, `y`) (the line's vertical centre).
pub fn legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (mut x, y): (i32, i32),
    items: &[(String, Swatch)],
) -> Drawn {
    let style = anchored(font(16.0, INK), HPos::Left, VPos::Center);
    for (label, swatch) in items {
        match *swatch {
            Swatch::Fill(c) => root.draw(&Rectangle::new(
                [(x, y - 7), (x + 14, y + 7)],
                ShapeStyle::from(&c).filled(),
            ))?,
            Swatch::Line(c, w) => root.draw(&PathElement::new(
                vec![(x - 4, y), (x + 18, y)],
                ShapeStyle::from(&c).stroke_width(w),
            ))?,
        }
        root.draw(&Text::new(label.clone(), (x + 22, y), style.clone()))?;
        x += 22 + text_width(root, label, &style) + 26;
    }
    Ok(())
}

/// A message in the middle of an area with nothing to plot.
pub fn empty<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, message: &str) -> Drawn {
    let (w, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        message.to_string(),
        (w as i32 / 2, h as i32 / 2),
        anchored(font(18.0, MUTED), HPos::Center, VPos::Center),
    ))?;
    Ok(())
}

/// Rounds a maximum up to a tidy axis end (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 × 10ⁿ), at
/// least 1.
pub fn nice_max(value: f64) -> f64 {
    if !(value.is_finite() && value > 1.0) {
        return 1.0;
    }
    let magnitude = 10f64.powf(value.log10().floor());
    for step in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if step * magnitude >= value {
            return step * magnitude;
        }
    }
    10.0 * magnitude
}

/// Integer tick labels for count axes.
pub fn whole(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        crate::text::count(v.round().max(0.0) as u64)
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_ends_are_tidy() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(7.0), 8.0);
        assert_eq!(nice_max(82.0), 100.0);
        assert_eq!(nice_max(121.0), 150.0);
        assert_eq!(nice_max(5061.0), 6000.0);
        assert_eq!(nice_max(2300.0), 2500.0);
    }
}
