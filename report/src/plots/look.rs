//! The plots' shared look: the palette, text styles, the title and legend, the bar-chart frame,
//! axis ends, and the error a drawing returns. Every plot module draws with these; this module
//! draws no plot itself.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::fonts::FAMILY;

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
