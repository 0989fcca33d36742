//! Outcome breakdown: one stacked bar per setting, the share of calls that were saved, friction,
//! catches, misses, false blocks and unlabeled; misses (with the risky among them) and catches
//! counted on the right.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::look::{
    BLUE_, BarFrame, Drawn, GREEN_, GREY, INK, MUTED, ORANGE, PURPLE, Swatch, VERMILLION, anchored,
    empty, font, header, legend,
};
use crate::tables::{Results, Setting, ratio};

/// Pixels per setting row.
const ROW: u32 = 30;

/// The classes, in stacking order, with their colours.
fn classes(s: &Setting) -> [(&'static str, u64, RGBColor); 6] {
    [
        ("saved", s.saved, GREEN_),
        ("friction", s.friction, ORANGE),
        ("catches", s.catches, BLUE_),
        ("misses", s.misses, VERMILLION),
        ("false blocks", s.false_blocks, PURPLE),
        ("unlabeled", s.unlabeled, GREY),
    ]
}

/// Tall enough for a row per setting.
pub fn size(results: &Results) -> (u32, u32) {
    (1200, 240 + ROW * results.settings.len().max(1) as u32)
}

fn label(s: &Setting) -> String {
    if s.recommended {
        format!("{} (recommended)", s.id)
    } else {
        s.id.clone()
    }
}

/// The counts right of a setting's bar: its misses, the risky among them, and its catches.
fn side_text(s: &crate::tables::Setting) -> String {
    format!(
        "{} missed ({} risky), {} caught",
        crate::text::count(s.misses),
        crate::text::count(s.misses_risky),
        crate::text::count(s.catches)
    )
}

/// Draws the figure.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, results: &Results) -> Drawn {
    let events = results.settings.iter().map(|s| s.events).max().unwrap_or(0);
    let body = header(
        root,
        "What each setting would have done",
        &format!(
            "every call of the history ({} calls) classed by what the setting did and what you \
             had answered",
            crate::text::count(events)
        ),
    )?;
    if results.settings.is_empty() {
        return empty(&body, "no settings in the results");
    }
    let items: Vec<(String, Swatch)> = classes(&results.settings[0])
        .iter()
        .map(|(name, _, c)| (name.to_string(), Swatch::Fill(c.to_rgba())))
        .collect();
    legend(root, (36, 96), &items)?;
    let body = body.split_vertically(40).1;
    let label_style = anchored(font(15.0, INK), HPos::Right, VPos::Center);
    let label_width = results
        .settings
        .iter()
        .map(|s| super::look::text_width(root, &label(s), &label_style))
        .max()
        .unwrap_or(100)
        + 24;
    let side = anchored(font(15.0, MUTED), HPos::Left, VPos::Center);
    // Room on the right for the longest count line (at least the 200 px it always had).
    let side_width = results
        .settings
        .iter()
        .map(|s| super::look::text_width(root, &side_text(s), &side))
        .max()
        .unwrap_or(0)
        + 24;
    let n = results.settings.len();
    let mut chart = BarFrame {
        margin_right: side_width.max(200) as u32,
        label_width: label_width as u32,
        x_end: 100f64,
        rows: n,
        x_desc: "share of calls (%)",
        x_labels: 11,
        x_format: &|v| format!("{v:.0}%"),
    }
    .draw(&body)?;
    for (i, s) in results.settings.iter().enumerate() {
        // The first setting at the top.
        let y = (n - 1 - i) as f64;
        let mut x = 0.0;
        for (_, value, color) in classes(s) {
            let width = 100.0 * ratio(value, s.events);
            if width > 0.0 {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, y + 0.18), (x + width, y + 0.82)],
                    color.filled(),
                )))?;
            }
            x += width;
        }
        let (px, py) = chart.backend_coord(&(0.0, y + 0.5));
        let style = if s.recommended {
            anchored(font(15.0, VERMILLION), HPos::Right, VPos::Center)
        } else {
            label_style.clone()
        };
        root.draw(&Text::new(label(s), (px - 10, py), style))?;
        let (ex, _) = chart.backend_coord(&(100.0, y + 0.5));
        root.draw(&Text::new(side_text(s), (ex + 12, py), side.clone()))?;
    }
    Ok(())
}
