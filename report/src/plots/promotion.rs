//! Time to promotion: a histogram of the days from a signature's first sighting to the moment
//! learning allowed it, in bins that widen with time (hours to weeks), one bar per setting.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::look::{
    Drawn, FOCUS, GRID, INK, MUTED, SKY, Swatch, anchored, empty, font, header, legend, nice_max,
    whole,
};
use crate::tables::Results;

/// Bins: upper bound in days (exclusive) and label.
const BINS: [(f64, &str); 7] = [
    (1.0 / 24.0, "< 1 h"),
    (0.25, "1-6 h"),
    (1.0, "6-24 h"),
    (3.0, "1-3 days"),
    (7.0, "3-7 days"),
    (28.0, "1-4 weeks"),
    (f64::INFINITY, "4 weeks +"),
];

/// One setting's promotions in bins.
struct Histogram {
    id: String,
    recommended: bool,
    color: RGBColor,
    bins: [u64; 7],
    median: f64,
}

/// The settings shown (the focus settings that promoted something; else the setting that
/// promoted most) with their bin counts and median days.
fn histograms(results: &Results) -> Vec<Histogram> {
    let days_of = |id: &str| -> Vec<f64> {
        let mut d: Vec<f64> = results
            .promotions
            .iter()
            .filter(|p| p.setting_id == id && p.days.is_finite())
            .map(|p| p.days.max(0.0))
            .collect();
        d.sort_by(f64::total_cmp);
        d
    };
    // A focus setting keeps its colour from the other plots.
    let mut chosen: Vec<(String, bool, RGBColor)> = results
        .focus()
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.clone(), s.recommended, FOCUS[i % FOCUS.len()]))
        .filter(|(id, _, _)| !days_of(id).is_empty())
        .collect();
    if chosen.is_empty() {
        let mut most: Option<(&str, usize)> = None;
        for s in results.settings.iter().filter(|s| s.enforcing()) {
            let n = days_of(&s.id).len();
            if n > 0 && most.is_none_or(|(_, m)| n > m) {
                most = Some((&s.id, n));
            }
        }
        chosen.extend(most.map(|(id, _)| (id.to_string(), false, SKY)));
    }
    chosen
        .into_iter()
        .map(|(id, recommended, color)| {
            let days = days_of(&id);
            let mut bins = [0u64; 7];
            for d in &days {
                let i = BINS.iter().position(|(end, _)| d < end).unwrap_or(6);
                bins[i] += 1;
            }
            let median = days.get(days.len() / 2).copied().unwrap_or(f64::NAN);
            Histogram {
                id,
                recommended,
                color,
                bins,
                median,
            }
        })
        .collect()
}

/// Draws the figure.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, results: &Results) -> Drawn {
    let shown = histograms(results);
    let subtitle = match results.recommended() {
        Some(r) if !shown.iter().any(|h| h.recommended) => format!(
            "{} (recommended) promotes nothing: it never stops asking; shown: what the other \
             settings learned",
            r.id
        ),
        _ => "signatures promoted, by time from first sighting to promotion".into(),
    };
    let body = header(root, "Time to promotion", &subtitle)?;
    if shown.is_empty() {
        return empty(&body, "no setting promoted anything");
    }
    let items: Vec<(String, Swatch)> = shown
        .iter()
        .map(|h| {
            (
                format!(
                    "{}{}: {} promoted, median {}",
                    h.id,
                    if h.recommended { " (recommended)" } else { "" },
                    crate::text::count(h.bins.iter().sum()),
                    days(h.median)
                ),
                Swatch::Fill(h.color.to_rgba()),
            )
        })
        .collect();
    legend(root, (36, 96), &items)?;
    let body = body.split_vertically(40).1;
    let max = shown
        .iter()
        .flat_map(|h| h.bins.iter())
        .copied()
        .max()
        .unwrap_or(0) as f64;
    let y_end = nice_max(max * 1.1);
    let mut chart = ChartBuilder::on(&body)
        .margin_top(8)
        .margin_left(16)
        .margin_right(30)
        .margin_bottom(10)
        .x_label_area_size(70)
        .y_label_area_size(90)
        .build_cartesian_2d(0f64..BINS.len() as f64, 0f64..y_end)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .disable_x_mesh()
        .axis_style(MUTED)
        .label_style(font(15.0, MUTED))
        .axis_desc_style(font(16.0, INK))
        .x_desc("time from first sighting to promotion")
        .y_desc("signatures promoted (count)")
        .x_labels(0)
        .y_labels(8)
        .y_label_formatter(&whole)
        .draw()?;
    let k = shown.len() as f64;
    let bin_label = anchored(font(15.0, INK), HPos::Center, VPos::Top);
    for (b, (_, name)) in BINS.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(b as f64 + 0.5, 0.0));
        root.draw(&Text::new(
            name.to_string(),
            (px, py + 10),
            bin_label.clone(),
        ))?;
        for (j, h) in shown.iter().enumerate() {
            let left = b as f64 + 0.1 + 0.8 * j as f64 / k;
            let right = left + 0.8 / k - 0.02;
            if h.bins[b] > 0 {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(left, 0.0), (right, h.bins[b] as f64)],
                    h.color.filled(),
                )))?;
            }
        }
    }
    Ok(())
}

/// `3.2 hours`, `2.5 days`.
fn days(d: f64) -> String {
    if !d.is_finite() {
        "n/a".into()
    } else if d < 1.0 {
        format!("{:.1} hours", d * 24.0)
    } else {
        format!("{d:.1} days")
    }
}
