//! The Pareto frontier: every setting by prompt rate (x) and misses (y); the frontier joined,
//! the recommendation ringed, the baselines labelled, the miss budget dashed — when it counts
//! every miss, as the axis does (a budget on risky misses is said in the subtitle instead).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::look::{
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
    let assumption = |key: &str| {
        results
            .summary
            .assumptions
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    };
    // A budget on risky misses is not a line on an axis of all misses.
    let on_risky =
        assumption(keys::MISS_BUDGET_ON).and_then(serde_json::Value::as_str) == Some("risky");
    let budget_share = assumption(keys::MISS_BUDGET).and_then(serde_json::Value::as_f64);
    let body = header(
        root,
        "Prompts against misses",
        &format!(
            "{} settings; misses are calls you had refused that a setting would have let run \
             (of {} refused){}",
            results.settings.len(),
            crate::text::count(refused),
            match budget_share {
                Some(b) if on_risky => format!(
                    "; the {} miss budget counts risky misses only (not drawn)",
                    crate::text::percent(b)
                ),
                _ => String::new(),
            }
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
        ][..if on_risky { 4 } else { 5 }],
    )?;
    let body = body.split_vertically(40).1;
    let budget = budget_share
        .filter(|_| !on_risky)
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
    let (plot_x, plot_y) = chart.plotting_area().get_pixel_range();
    let mid = (plot_x.start + plot_x.end) / 2;
    let style_of = |name: &str, h: HPos| {
        let color = if name.ends_with("(recommended)") {
            VERMILLION
        } else {
            INK
        };
        anchored(font(16.0, color), h, VPos::Center)
    };
    let blocks: Vec<LabelBlock> = labels
        .iter()
        .map(|((x, y), names)| {
            let left = *x > mid;
            let h = if left { HPos::Right } else { HPos::Left };
            let width = names
                .iter()
                .map(|name| super::look::text_width(root, name, &style_of(name, h)))
                .max()
                .unwrap_or(0)
                + 6;
            LabelBlock {
                point: (*x, *y),
                width,
                lines: names.len() as i32,
                left,
            }
        })
        .collect();
    let tops = place_labels(&blocks, (plot_y.start, plot_y.end));
    for (((_, names), block), (x0, top)) in labels.iter().zip(&blocks).zip(tops) {
        let h = if block.left { HPos::Right } else { HPos::Left };
        for (i, name) in names.iter().enumerate() {
            let style = style_of(name, h);
            let ty = top + LINE / 2 + LINE * i as i32;
            // A white ground keeps the label readable over lines and points.
            let width = super::look::text_width(root, name, &style) + 6;
            let bx = if block.left {
                x0 + block.width - width
            } else {
                x0
            };
            root.draw(&Rectangle::new(
                [(bx, ty - LINE / 2), (bx + width, ty + LINE / 2)],
                WHITE.mix(0.85).filled(),
            ))?;
            let tx = if block.left { bx + width - 3 } else { bx + 3 };
            root.draw(&Text::new(name.clone(), (tx, ty), style))?;
        }
    }
    Ok(())
}

/// The height of one label line, in pixels.
const LINE: i32 = 20;

/// A block of labels beside its point: to the left of it on the plot's right half.
#[derive(Debug, Clone, Copy)]
struct LabelBlock {
    point: (i32, i32),
    width: i32,
    lines: i32,
    left: bool,
}

impl LabelBlock {
    fn rect(&self, top: i32) -> (i32, i32, i32, i32) {
        let x0 = if self.left {
            self.point.0 - 15 - self.width
        } else {
            self.point.0 + 15
        };
        (x0, top, x0 + self.width, top + LINE * self.lines)
    }
}

/// Where each block goes, as (left, top): just above its point, else just below, else further
/// up or down, whichever first covers no block placed before it and stays in the plot's rows
/// (`rows`); the first spot when none is free. Settings near one another on the frontier keep
/// readable labels.
fn place_labels(blocks: &[LabelBlock], rows: (i32, i32)) -> Vec<(i32, i32)> {
    let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
    let mut out = Vec::new();
    for block in blocks {
        let height = LINE * block.lines;
        let above = block.point.1 - 4 - height;
        let below = block.point.1 + 4;
        let candidates = [
            above,
            below,
            above - LINE,
            below + LINE,
            above - 2 * LINE,
            below + 2 * LINE,
            above - 3 * LINE,
            below + 3 * LINE,
        ];
        let free = |top: i32| {
            let r = block.rect(top);
            r.1 >= rows.0
                && r.3 <= rows.1
                && placed
                    .iter()
                    .all(|p| r.2 <= p.0 || p.2 <= r.0 || r.3 <= p.1 || p.3 <= r.1)
        };
        let top = candidates
            .iter()
            .copied()
            .find(|top| free(*top))
            .unwrap_or(above);
        let rect = block.rect(top);
        placed.push(rect);
        out.push((rect.0, top));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlap(a: (i32, i32, i32, i32), b: (i32, i32, i32, i32)) -> bool {
        !(a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1)
    }

    /// Settings whose points sit close together (as the baselines often do) get labels that do
    /// not cover one another.
    #[test]
    fn close_points_get_labels_that_do_not_overlap() {
        let block = |x, y, lines| LabelBlock {
            point: (x, y),
            width: 160,
            lines,
            left: false,
        };
        let blocks = [
            block(100, 300, 1),
            block(110, 310, 2),
            block(105, 295, 1),
            block(120, 305, 1),
        ];
        let tops = place_labels(&blocks, (0, 600));
        let rects: Vec<_> = blocks
            .iter()
            .zip(&tops)
            .map(|(b, (_, t))| b.rect(*t))
            .collect();
        for (i, a) in rects.iter().enumerate() {
            for b in rects.iter().skip(i + 1) {
                assert!(!overlap(*a, *b), "{a:?} and {b:?} overlap");
            }
            assert!(a.1 >= 0 && a.3 <= 600, "{a:?} leaves the plot");
        }
        // A lone label sits just above its point.
        let lone = place_labels(&[block(100, 300, 1)], (0, 600));
        assert_eq!(lone, [(115, 300 - 4 - LINE)]);
    }
}
