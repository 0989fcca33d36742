//! The capability mix: what the agents did, as the share of all actions in the history per
//! capability (`capabilities.parquet`, summed across projects), one bar per capability, most
//! first, the long tail summed as `other`. No setting changes it.

use std::collections::{BTreeMap, BTreeSet};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::look::{
    BLUE_, BarFrame, Drawn, GREY, INK, MUTED, anchored, empty, font, header, nice_max,
};
use crate::tables::{Results, ratio};

/// Rows shown at most; past that the last row is `other`, the sum of the rest.
pub const ROWS: usize = 14;

/// Pixels per capability row.
const ROW: u32 = 32;

/// The name of the row that sums the long tail.
pub const OTHER: &str = "other";

/// The capability mix across projects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mix {
    /// Capability and actions, most first (ties by name), at most [`ROWS`]; `other` last.
    pub rows: Vec<(String, u64)>,
    /// Whether the last row is `other`, the long tail summed.
    pub other: bool,
    /// Actions in all.
    pub actions: u64,
    /// Projects with at least one action.
    pub projects: usize,
}

/// Sums the capabilities table across projects.
pub fn mix(results: &Results) -> Mix {
    let mut by_capability: BTreeMap<&str, u64> = BTreeMap::new();
    let mut projects = BTreeSet::new();
    for c in results.capabilities.iter().filter(|c| c.actions > 0) {
        *by_capability.entry(&c.capability).or_insert(0) += c.actions;
        projects.insert(c.project_key.as_str());
    }
    let mut rows: Vec<(String, u64)> = by_capability
        .into_iter()
        .map(|(name, n)| (name.to_string(), n))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let actions = rows.iter().map(|(_, n)| n).sum();
    let other = rows.len() > ROWS;
    if other {
        let rest = rows.split_off(ROWS - 1);
        rows.push((OTHER.into(), rest.iter().map(|(_, n)| n).sum()));
    }
    Mix {
        rows,
        other,
        actions,
        projects: projects.len(),
    }
}

/// Tall enough for a row per capability.
pub fn size(results: &Results) -> (u32, u32) {
    let rows = mix(results).rows.len().max(2) as u32;
    (1200, 200 + ROW * rows)
}

/// Percent tick labels: whole numbers plain, else one decimal (small shares).
fn percent_tick(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}%")
    } else {
        format!("{v:.1}%")
    }
}

/// Draws the figure.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, results: &Results) -> Drawn {
    let mix = mix(results);
    let subtitle = if mix.actions == 0 {
        "actions in the history by capability, across projects".to_string()
    } else {
        format!(
            "{} {} in {} {}, by capability (the same under every setting)",
            crate::text::count(mix.actions),
            if mix.actions == 1 {
                "action"
            } else {
                "actions"
            },
            crate::text::count(mix.projects as u64),
            if mix.projects == 1 {
                "project"
            } else {
                "projects"
            }
        )
    };
    let body = header(root, "What the agents did: capability mix", &subtitle)?;
    if mix.rows.is_empty() {
        return empty(
            &body,
            "no actions by capability in the results (no capabilities.parquet)",
        );
    }
    let label_style = anchored(font(15.0, INK), HPos::Right, VPos::Center);
    let label_width = mix
        .rows
        .iter()
        .map(|(name, _)| super::look::text_width(root, name, &label_style))
        .max()
        .unwrap_or(100)
        + 24;
    let share = |n: u64| 100.0 * ratio(n, mix.actions);
    let max = mix.rows.iter().map(|(_, n)| share(*n)).fold(0.0, f64::max);
    let x_end = nice_max(max * 1.15).min(100.0);
    let n = mix.rows.len();
    let mut chart = BarFrame {
        margin_right: 140,
        label_width: label_width as u32,
        x_end,
        rows: n,
        x_desc: "share of actions (%)",
        x_labels: 8,
        x_format: &percent_tick,
    }
    .draw(&body)?;
    let value_style = anchored(font(13.0, MUTED), HPos::Left, VPos::Center);
    for (i, (name, count)) in mix.rows.iter().enumerate() {
        // The most actions at the top.
        let y = (n - 1 - i) as f64;
        let width = share(*count);
        let color = if mix.other && i == n - 1 { GREY } else { BLUE_ };
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, y + 0.18), (width, y + 0.82)],
            color.filled(),
        )))?;
        let (px, py) = chart.backend_coord(&(0.0, y + 0.5));
        root.draw(&Text::new(name.clone(), (px - 10, py), label_style.clone()))?;
        let (ex, _) = chart.backend_coord(&(width, y + 0.5));
        root.draw(&Text::new(
            format!(
                "{} ({})",
                crate::text::count(*count),
                crate::text::percent(ratio(*count, mix.actions))
            ),
            (ex + 6, py),
            value_style.clone(),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::Capability;

    fn row(project: &str, capability: &str, actions: u64) -> Capability {
        Capability {
            project_key: project.into(),
            capability: capability.into(),
            actions,
        }
    }

    #[test]
    fn projects_are_summed_most_first() {
        let results = Results {
            capabilities: vec![
                row("a", "exec.test", 5),
                row("b", "exec.test", 7),
                row("a", "fs.read.workspace", 10),
                row("b", "net.fetch", 2),
                row("c", "meta", 0),
            ],
            ..Results::default()
        };
        let m = mix(&results);
        assert_eq!(
            m.rows,
            vec![
                ("exec.test".to_string(), 12),
                ("fs.read.workspace".to_string(), 10),
                ("net.fetch".to_string(), 2),
            ]
        );
        assert_eq!((m.actions, m.projects, m.other), (24, 2, false));
    }

    #[test]
    fn the_long_tail_is_summed_as_other() {
        let capabilities: Vec<Capability> = (0..20u64)
            .map(|i| row("a", &format!("cap.{i:02}"), 100 - i))
            .collect();
        let results = Results {
            capabilities,
            ..Results::default()
        };
        let m = mix(&results);
        assert_eq!(m.rows.len(), ROWS);
        assert_eq!(m.rows[0], ("cap.00".to_string(), 100));
        assert_eq!(m.rows[ROWS - 2], ("cap.12".to_string(), 88));
        let tail: u64 = (13..20u64).map(|i| 100 - i).sum();
        assert_eq!(m.rows[ROWS - 1], (OTHER.to_string(), tail));
        assert!(m.other);
        assert_eq!(m.actions, m.rows.iter().map(|(_, n)| n).sum::<u64>());
    }

    #[test]
    fn exactly_the_row_limit_has_no_other() {
        let capabilities: Vec<Capability> = (0..ROWS as u64)
            .map(|i| row("a", &format!("cap.{i:02}"), 50 - i))
            .collect();
        let results = Results {
            capabilities,
            ..Results::default()
        };
        let m = mix(&results);
        assert_eq!(m.rows.len(), ROWS);
        assert!(!m.other && m.rows.iter().all(|(name, _)| name != OTHER));
    }
}
