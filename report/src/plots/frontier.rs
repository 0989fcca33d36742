//! The Pareto frontier: every setting by prompt rate (x) and misses (y); the frontier joined,
//! the recommendation ringed, the baselines labelled, the miss budget dashed.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::{
    BLUE_, Drawn, GREY, GRID, INK, MUTED, Swatch, VERMILLION, anchored, empty, font, header,
    legend, nice_max, whole,
};
use crate::columns::summary as keys;
use crate::tables::Results;

/// Draws the figure.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, results: &Results) -> Drawn {
    let refused = results
        .settings
        .iter()
        .map(|s| s.refused)
        .max()
        .unwrap_or(0);
    let body = header(
        root,
        "Prompts against misses",
        &format!(
            "{} settings; misses are calls you had refused that a setting would have let run \
             (of {} refused)",
            results.settings.len(),
            crate::text::count(refused)
        ),
    )?;
    if results.settings.is_empty() {
        return empty(&body, "no settings in the results");
    }
    legend(
        root,
        (36, 96),
        &[
            ("setting".into(), Swatch::Fill(GREY.to_rgba())),
            ("on the frontier".into(), Swatch::Fill(BLUE_.to_rgba())),
            ("baseline".into(), Swatch::Fill(INK.to_rgba())),
            ("recommended".into(), Swatch::Line(VERMILLION.to_rgba(), 3)),
            ("miss budget".into(), Swatch::Line(MUTED.to_rgba(), 1)),
        ],
    )?;
    let body = body.split_vertically(40).1;
    let budget = results
        .summary
        .assumptions
        .iter()
        .find(|(k, _)| k == keys::MISS_BUDGET)
        .and_then(|(_, v)| v.as_f64())
        .map(|b| b * refused as f64);
    let max_misses = results.settings.iter().map(|s| s.misses).max().unwrap_or(0) as f64;
    let y_end = nice_max((max_misses.max(budget.unwrap_or(0.0)) * 1.08).max(1.0));
    let mut chart = ChartBuilder::on(&body)
        .margin_top(12)
        .margin_left(16)
        .margin_right(40)
        .margin_bottom(10)
        .x_label_area_size(60)
        .y_label_area_size(90)
        .build_cartesian_2d(-2f64..102f64, 0f64..y_end)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .axis_style(MUTED)
        .label_style(font(15.0, MUTED))
        .axis_desc_style(font(16.0, INK))
        .x_desc("prompt rate (% of calls asked)")
        .y_desc("misses (refused calls let through)")
        .x_labels(11)
        .y_labels(8)
        .x_label_formatter(&|v| format!("{v:.0}%"))
        .y_label_formatter(&whole)
        .draw()?;
    let point = |s: &crate::tables::Setting| (100.0 * s.prompt_rate(), s.misses as f64);
    if let Some(budget) = budget {
        // Dashes by hand: a path per dash.
        let mut x = 0.0_f64;
        while x < 100.0 {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, budget), ((x + 1.5).min(100.0), budget)],
                ShapeStyle::from(&MUTED).stroke_width(1),
            )))?;
            x += 3.0;
        }
    }
    let mut frontier: Vec<(f64, f64)> = results
        .settings
        .iter()
        .filter(|s| s.frontier)
        .map(point)
        .collect();
    frontier.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    if frontier.len() > 1 {
        chart.draw_series(std::iter::once(PathElement::new(
            frontier,
            ShapeStyle::from(&BLUE_.mix(0.7)).stroke_width(2),
        )))?;
    }
    for s in &results.settings {
        let p = point(s);
        if s.baseline {
            chart.draw_series(std::iter::once(
                EmptyElement::at(p) + Rectangle::new([(-6, -6), (6, 6)], INK.filled()),
            ))?;
        } else if s.frontier {
            chart.draw_series(std::iter::once(Circle::new(p, 6, BLUE_.filled())))?;
        } else {
            chart.draw_series(std::iter::once(Circle::new(p, 5, GREY.stroke_width(2))))?;
        }
        if s.recommended {
            chart.draw_series(std::iter::once(Circle::new(
                p,
                13,
                VERMILLION.stroke_width(3),
            )))?;
        }
    }
    // Labels: the recommendation and the baselines, joined where they fall on one spot.
    let mut labels: Vec<((i32, i32), Vec<String>)> = Vec::new();
    for s in results
        .settings
        .iter()
        .filter(|s| s.recommended || s.baseline)
    {
        let at = chart.backend_coord(&point(s));
        let name = if s.recommended {
            format!("{} (recommended)", s.id)
        } else {
            s.id.clone()
        };
        match labels
            .iter_mut()
            .find(|(p, _)| (p.0 - at.0).abs() < 14 && (p.1 - at.1).abs() < 14)
        {
            Some((_, names)) => names.push(name),
            None => labels.push((at, vec![name])),
        }
    }
    let (plot_x, _) = chart.plotting_area().get_pixel_range();
    let mid = (plot_x.start + plot_x.end) / 2;
    for ((x, y), names) in labels {
        let left = x > mid;
        let (h, dx) = if left {
            (HPos::Right, -18)
        } else {
            (HPos::Left, 18)
        };
        for (i, name) in names.iter().enumerate() {
            let color = if name.ends_with("(recommended)") {
                VERMILLION
            } else {
                INK
            };
            let style = anchored(font(16.0, color), h, VPos::Center);
            let (tx, ty) = (x + dx, y - 14 - 20 * (names.len() as i32 - 1 - i as i32));
            // A white ground keeps the label readable over lines and points.
            let width = super::text_width(root, name, &style);
            let x0 = if left { tx - width - 3 } else { tx - 3 };
            root.draw(&Rectangle::new(
                [(x0, ty - 10), (x0 + width + 6, ty + 10)],
                WHITE.mix(0.85).filled(),
            ))?;
            root.draw(&Text::new(name.clone(), (tx, ty), style))?;
        }
    }
    Ok(())
}
