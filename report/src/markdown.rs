//! `report.md`: the settings table, the assumptions, the plots (as the PNG files, or the SVGs
//! when no PNG was drawn) and the misses, for terminals and pull requests.
//!
//! Owns: the Markdown page. Must not: put text from the data in it unescaped (every cell goes
//! through [`text::markdown_cell`], so a command cannot open a link, a code span or HTML).

use std::fmt::Write;

use crate::html::{Figure, grouped};
use crate::tables::Results;
use crate::text::{self, markdown_cell as cell};

/// Misses listed per setting in Markdown (the HTML page lists more).
const MISSES_SHOWN: usize = 50;

/// The whole page.
pub fn page(data: &Results, figures: &[Figure], notes: &[String]) -> String {
    let mut out = String::new();
    out.push_str("# leastgrant report\n\n");
    let lede = text::lede(data);
    let _ = writeln!(out, "{}.\n", cell(&lede));
    for note in notes {
        let _ = writeln!(out, "> **Note:** {}\n", cell(note));
    }
    match &data.summary.recommended {
        Some((id, why)) => {
            let _ = writeln!(out, "**Recommended: {}** — {}.\n", cell(id), cell(why));
        }
        None => out.push_str(
            "**No setting is recommended**: every setting lets through more of what you \
             refused than the miss budget allows.\n\n",
        ),
    }
    out.push_str("## Settings\n\n| setting |");
    for h in text::SETTING_HEADERS {
        let _ = write!(out, " {h} |");
    }
    out.push_str("\n|---|");
    for _ in text::SETTING_HEADERS {
        out.push_str("---:|");
    }
    out.push('\n');
    for s in &data.settings {
        let marks = text::marks(s);
        let name = if s.recommended {
            format!("**{}**", cell(&s.id))
        } else {
            cell(&s.id)
        };
        let _ = write!(
            out,
            "| {name}{} |",
            if marks.is_empty() {
                String::new()
            } else {
                format!(" ({})", marks.join(", "))
            }
        );
        for c in text::setting_cells(s) {
            let _ = write!(out, " {} |", cell(&c));
        }
        out.push('\n');
    }
    out.push_str(
        "\nrecommended: the fewest prompts within the miss budget; frontier: nothing else asks \
         less without missing more; missed: refused calls let through, of all refused, with a \
         one-sided 95% upper bound on the rate; ",
    );
    out.push_str(text::STAKE_NOTE);
    out.push_str(".\n\n## Assumptions\n\n");
    for (key, value) in &data.summary.assumptions {
        let _ = writeln!(
            out,
            "- {}: {}",
            cell(&text::assumption_label(key)),
            cell(&text::assumption_value(key, value))
        );
    }
    labels(&mut out, data);
    out.push_str("\n## Plots\n\n");
    for f in figures {
        let name = f.plot.name();
        let _ = writeln!(out, "### {}\n", f.plot.title());
        if f.has_png {
            let _ = writeln!(
                out,
                "![{}](plots/{name}.png)\n\n{} ([SVG](plots/{name}.svg))\n",
                f.plot.title(),
                f.plot.caption()
            );
        } else {
            let _ = writeln!(
                out,
                "![{}](plots/{name}.svg)\n\n{}\n",
                f.plot.title(),
                f.plot.caption()
            );
        }
    }
    out.push_str("## Misses\n\n");
    let groups = grouped(data);
    if groups.is_empty() {
        out.push_str("No setting let through anything you had refused.\n");
    }
    if let Some(r) = data.recommended().filter(|r| r.misses == 0) {
        let _ = writeln!(
            out,
            "{} (recommended) let through nothing you had refused.\n",
            cell(&r.id)
        );
    }
    for (setting, list) in groups {
        let _ = writeln!(
            out,
            "### {}{} — {} {} ({} risky, {} routine)\n\n| when | stake | project | tool | command or input | reason codes | reasons |\n|---|---|---|---|---|---|---|",
            cell(&setting.id),
            if setting.recommended {
                " (recommended)"
            } else {
                ""
            },
            list.len(),
            if list.len() == 1 { "miss" } else { "misses" },
            list.iter().filter(|m| m.risky).count(),
            list.iter().filter(|m| !m.risky).count()
        );
        // Risky misses first: they are the security regrets.
        let mut list = list;
        list.sort_by_key(|m| !m.risky);
        for m in list.iter().take(MISSES_SHOWN) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                cell(&m.ts_us.map(text::datetime).unwrap_or_default()),
                if m.risky { "risky" } else { "routine" },
                cell(&m.project_key),
                cell(&m.tool_name),
                cell(&text::command_or_input(m)),
                cell(&m.reason_codes.replace(',', ", ")),
                cell(&m.reasons)
            );
        }
        if list.len() > MISSES_SHOWN {
            let _ = writeln!(
                out,
                "\nand {} more (index.html lists up to {}; all are in misses.parquet)",
                list.len() - MISSES_SHOWN,
                crate::html::MISSES_SHOWN
            );
        }
        out.push('\n');
    }
    out
}

/// Where the labels came from, per agent and in total (absent from older replays).
fn labels(out: &mut String, data: &Results) {
    let Some(labels) = data.labels() else {
        return;
    };
    out.push_str(
        "\n## Labels\n\nWhere the replay's labels came from, per agent, whatever the setting: \
         how many calls a decision the history recorded labelled, and how many were inferred.\n\n\
         | agent |",
    );
    for h in text::LABEL_HEADERS {
        let _ = write!(out, " {h} |");
    }
    out.push_str("\n|---|");
    for _ in text::LABEL_HEADERS {
        out.push_str("---:|");
    }
    out.push('\n');
    for row in labels.rows() {
        match row.agent {
            None => out.push_str("| **total** |"),
            Some(agent) => {
                let weak = if row.weak { " (weakly labelled)" } else { "" };
                let _ = write!(out, "| {}{weak} |", cell(agent));
            }
        }
        for c in text::label_cells(row.counts) {
            let _ = write!(out, " {} |", cell(&c));
        }
        out.push('\n');
    }
    let _ = write!(out, "\n{}.", cell(text::LABELS_NOTE));
    if let Some(weak) = labels.weak_note() {
        let _ = write!(out, " Weakly labelled: {}.", cell(weak));
    }
    out.push('\n');
    if !labels.assumption.is_empty() {
        let _ = writeln!(out, "\n**Assumption:** {}.", cell(&labels.assumption));
    }
}
