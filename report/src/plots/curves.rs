//! Learning curves: the prompt rate per window of calls as each project's history grows, one
//! panel per setting (the recommendation, a frontier setting, the always-ask and agent-defaults
//! baselines): projects faint, the median bold over its p25–p75 band.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::look::{
    Drawn, FOCUS, GRID, INK, MUTED, Swatch, anchored, bold, empty, font, header, legend,
};
use crate::columns::baselines;
use crate::tables::{Results, Setting};

/// The panels: up to two focus settings, then the two reference baselines (any baseline when
/// those are absent); at most four.
fn panels(results: &Results) -> Vec<(&Setting, RGBColor, String)> {
    let mut out: Vec<(&Setting, RGBColor, String)> = Vec::new();
    for (i, s) in results.focus().into_iter().take(2).enumerate() {
        let role = if s.recommended {
            "recommended"
        } else {
            "on the frontier"
        };
        out.push((s, FOCUS[i], role.into()));
    }
    let mut baselines: Vec<&Setting> = [baselines::ALWAYS_ASK, baselines::AGENT_DEFAULTS]
        .iter()
        .filter_map(|id| results.setting(id))
        .collect();
    if baselines.is_empty() {
        baselines = results.settings.iter().filter(|s| s.baseline).collect();
    }
    for s in baselines.into_iter().take(4 - out.len().min(4)) {
        out.push((s, RGBColor(90, 90, 90), "baseline".into()));
    }
    out.truncate(4);
    out
}

/// Two panels in a row, four in a square.
pub fn size(results: &Results) -> (u32, u32) {
    if panels(results).len() <= 2 {
        (1200, 560)
    } else {
        (1200, 980)
    }
}

/// Draws the figure.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, results: &Results) -> Drawn {
    let window = results.summary.window_events.max(1);
    let projects = results
        .summary
        .projects
        .unwrap_or_else(|| {
            let mut keys: Vec<&str> = results
                .curves
                .iter()
                .map(|c| c.project_key.as_str())
                .collect();
            keys.sort_unstable();
            keys.dedup();
            keys.len() as u64
        })
        .max(1);
    let body = header(
        root,
        "Learning curves: how often it asks as history grows",
        &format!("prompt rate per window of {window} calls, {projects} projects"),
    )?;
    let alpha = (2.5 / (projects as f64).sqrt()).clamp(0.06, 0.4);
    legend(
        root,
        (36, 96),
        &[
            ("one project".into(), Swatch::Line(MUTED.mix(0.6), 1)),
            ("median of projects".into(), Swatch::Line(INK.to_rgba(), 3)),
            (
                "25th-75th percentile of projects".into(),
                Swatch::Fill(MUTED.mix(0.25)),
            ),
        ],
    )?;
    let body = body.split_vertically(40).1;
    let panels = panels(results);
    if panels.is_empty() {
        return empty(&body, "no settings to plot");
    }
    // The x axis ends at the longest history shown.
    let x_end = results
        .curves
        .iter()
        .filter(|c| panels.iter().any(|(s, _, _)| s.id == c.setting_id))
        .map(|c| (c.x + 1) * window)
        .max()
        .unwrap_or(window)
        .max(window) as f64;
    let areas = if panels.len() <= 2 {
        body.split_evenly((1, 2))
    } else {
        body.split_evenly((2, 2))
    };
    for ((setting, color, role), area) in panels.iter().zip(areas.iter()) {
        panel(area, results, setting, *color, role, x_end, window, alpha)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    results: &Results,
    setting: &Setting,
    color: RGBColor,
    role: &str,
    x_end: f64,
    window: u64,
    alpha: f64,
) -> Drawn {
    area.draw(&Text::new(
        format!("{} ({role})", setting.id),
        (90, 8),
        anchored(bold(18.0, INK), HPos::Left, VPos::Top),
    ))?;
    let mut chart = ChartBuilder::on(area)
        .margin_top(36)
        .margin_left(12)
        .margin_right(28)
        .margin_bottom(8)
        .x_label_area_size(58)
        .y_label_area_size(78)
        .build_cartesian_2d(0f64..x_end, 0f64..104f64)?;
    let x_label = |v: &f64| crate::text::count(v.round().max(0.0) as u64);
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .axis_style(MUTED)
        .label_style(font(15.0, MUTED))
        .axis_desc_style(font(16.0, INK))
        .x_desc(format!(
            "calls into the project's history (windows of {window})"
        ))
        .y_desc("prompt rate (% of calls asked)")
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&x_label)
        .y_label_formatter(&|v| format!("{v:.0}%"))
        .draw()?;
    let w = window as f64;
    // Windows end at (x + 1) × window calls.
    let at = |x: u64| (x as f64 + 1.0) * w;
    let mut lines: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for c in results.curves.iter().filter(|c| c.setting_id == setting.id) {
        if c.prompt_rate.is_finite() && c.events > 0 {
            lines
                .entry(c.project_key.as_str())
                .or_default()
                .push((at(c.x), 100.0 * c.prompt_rate));
        }
    }
    if lines.is_empty() {
        let (w, h) = area.dim_in_pixel();
        area.draw(&Text::new(
            "no learning-curve points for this setting",
            (w as i32 / 2, h as i32 / 2),
            anchored(font(16.0, MUTED), HPos::Center, VPos::Center),
        ))?;
        return Ok(());
    }
    let faint = ShapeStyle::from(&color.mix(alpha)).stroke_width(1);
    for points in lines.values_mut() {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if points.len() == 1 {
            chart.draw_series(std::iter::once(Circle::new(points[0], 2, faint.filled())))?;
        } else {
            chart.draw_series(std::iter::once(PathElement::new(points.clone(), faint)))?;
        }
    }
    // The band and median where at least two projects have the window (one when there is
    // only one project).
    let many = lines.len() > 1;
    let mut band: Vec<_> = results
        .bands
        .iter()
        .filter(|b| b.setting_id == setting.id)
        .filter(|b| b.projects >= if many { 2 } else { 1 })
        .filter(|b| b.p25.is_finite() && b.median.is_finite() && b.p75.is_finite())
        .collect();
    band.sort_by_key(|b| b.x);
    for run in band.chunk_by(|a, b| b.x == a.x + 1) {
        let mut outline: Vec<(f64, f64)> = run.iter().map(|b| (at(b.x), 100.0 * b.p75)).collect();
        outline.extend(run.iter().rev().map(|b| (at(b.x), 100.0 * b.p25)));
        if run.len() > 1 {
            chart.draw_series(std::iter::once(Polygon::new(
                outline,
                color.mix(0.22).filled(),
            )))?;
        }
        let median: Vec<(f64, f64)> = run.iter().map(|b| (at(b.x), 100.0 * b.median)).collect();
        let strong = ShapeStyle::from(&darker(color)).stroke_width(3);
        if median.len() == 1 {
            chart.draw_series(std::iter::once(Circle::new(median[0], 4, strong.filled())))?;
        } else {
            chart.draw_series(std::iter::once(PathElement::new(median, strong)))?;
        }
    }
    Ok(())
}

/// A darker shade for the bold median line.
fn darker(c: RGBColor) -> RGBColor {
    RGBColor(
        (f64::from(c.0) * 0.7) as u8,
        (f64::from(c.1) * 0.7) as u8,
        (f64::from(c.2) * 0.7) as u8,
    )
}
