//! The friction budget: the prompts of the recommended and frontier settings by the reason code
//! of the action that asked, one bar per setting in each code's group.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::look::{
    BarFrame, Drawn, FOCUS, INK, MUTED, Swatch, anchored, empty, font, header, legend, nice_max,
    whole,
};
use crate::tables::{Results, Setting};

/// Reason codes shown; the rest are summed as `other`.
const CODES: usize = 12;

/// The settings and the codes, most prompts first, with each setting's count per code.
fn budget(results: &Results) -> (Vec<&Setting>, Vec<(String, Vec<u64>)>) {
    let focus = results.focus();
    let mut by_code: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for f in &results.friction {
        if let Some(i) = focus.iter().position(|s| s.id == f.setting_id) {
            by_code
                .entry(&f.reason_code)
                .or_insert_with(|| vec![0; focus.len()])[i] += f.count;
        }
    }
    let mut rows: Vec<(String, Vec<u64>)> = by_code
        .into_iter()
        .map(|(code, counts)| (code.to_string(), counts))
        .collect();
    rows.sort_by(|a, b| {
        b.1.iter()
            .sum::<u64>()
            .cmp(&a.1.iter().sum::<u64>())
            .then(a.0.cmp(&b.0))
    });
    if rows.len() > CODES {
        let rest = rows.split_off(CODES - 1);
        let mut other = vec![0; focus.len()];
        for (_, counts) in rest {
            for (o, c) in other.iter_mut().zip(counts) {
                *o += c;
            }
        }
        rows.push(("other".into(), other));
    }
    (focus, rows)
}

/// Tall enough for a group per code.
pub fn size(results: &Results) -> (u32, u32) {
    let (focus, rows) = budget(results);
    let group = 16 * focus.len().max(1) as u32 + 18;
    (1200, 250 + group * rows.len().max(2) as u32)
}

/// Draws the figure.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, results: &Results) -> Drawn {
    let (focus, rows) = budget(results);
    let body = header(
        root,
        "Friction budget: why it still asks",
        "prompts in the replay by the reason code of the action that asked",
    )?;
    if rows.is_empty() {
        return empty(&body, "no prompts with a reason code for these settings");
    }
    let items: Vec<(String, Swatch)> = focus
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let name = if s.recommended {
                format!(
                    "{} (recommended, {} prompts)",
                    s.id,
                    crate::text::count(s.ask)
                )
            } else {
                format!("{} ({} prompts)", s.id, crate::text::count(s.ask))
            };
            (name, Swatch::Fill(FOCUS[i % FOCUS.len()].to_rgba()))
        })
        .collect();
    legend(root, (36, 96), &items)?;
    let body = body.split_vertically(40).1;
    let label_style = anchored(font(15.0, INK), HPos::Right, VPos::Center);
    let label_width = rows
        .iter()
        .map(|(code, _)| super::look::text_width(root, code, &label_style))
        .max()
        .unwrap_or(100)
        + 24;
    let max = rows
        .iter()
        .flat_map(|(_, c)| c.iter())
        .copied()
        .max()
        .unwrap_or(0) as f64;
    let x_end = nice_max(max * 1.12);
    let n = rows.len();
    let mut chart = BarFrame {
        margin_right: 40,
        label_width: label_width as u32,
        x_end,
        rows: n,
        x_desc: "prompts (calls asked)",
        x_labels: 8,
        x_format: &whole,
    }
    .draw(&body)?;
    let k = focus.len().max(1) as f64;
    let value_style = anchored(font(13.0, MUTED), HPos::Left, VPos::Center);
    for (i, (code, counts)) in rows.iter().enumerate() {
        let y0 = (n - 1 - i) as f64;
        let (px, py) = chart.backend_coord(&(0.0, y0 + 0.5));
        root.draw(&Text::new(code.clone(), (px - 10, py), label_style.clone()))?;
        for (j, count) in counts.iter().enumerate() {
            // Bars top to bottom in legend order, inside 10%–90% of the row.
            let top = y0 + 0.9 - 0.8 * j as f64 / k;
            let bottom = top - 0.8 / k + 0.02;
            let color = FOCUS[j % FOCUS.len()];
            if *count > 0 {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, bottom), (*count as f64, top)],
                    color.filled(),
                )))?;
            }
            if *count > 0 {
                let (ex, ey) = chart.backend_coord(&(*count as f64, (top + bottom) / 2.0));
                root.draw(&Text::new(
                    crate::text::count(*count),
                    (ex + 6, ey),
                    value_style.clone(),
                ))?;
            }
        }
    }
    Ok(())
}
