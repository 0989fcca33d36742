//! `index.html`: one self-contained page (styles inline, plots as inline SVG, no script, no
//! external resource; a Content-Security-Policy forbids loading anything) with the settings
//! table, the assumptions, the plots and the misses.
//!
//! Owns: the page's structure and look. Must not: put any text from the data on the page
//! unescaped (commands, reasons, project paths and ids all go through [`text::html`]).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use crate::columns::summary as keys;
use crate::plots::Plot;
use crate::tables::{Miss, Results, ratio};
use crate::text::{self, html as esc};

/// Misses listed per setting; the rest are counted.
pub const MISSES_SHOWN: usize = 200;

/// Projects listed in the per-project table.
const PROJECTS_SHOWN: usize = 50;

/// A plot as the pages show it.
pub struct Figure {
    /// Which plot.
    pub plot: Plot,
    /// Its SVG document.
    pub svg: String,
    /// Whether a PNG was written beside it.
    pub has_png: bool,
}

const STYLE: &str = r#"
:root { --ink: #222; --muted: #666; --line: #e4e4e4; --accent: #d55e00; --frontier: #0072b2; }
* { box-sizing: border-box; }
body { margin: 0; background: #fafafa; color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 28px 64px; background: #fff; }
h1 { font-size: 28px; margin: 8px 0 4px; }
h2 { font-size: 21px; margin: 36px 0 10px; padding-top: 8px; border-top: 1px solid var(--line); }
h3 { font-size: 17px; margin: 20px 0 8px; }
p.lede { color: var(--muted); margin-top: 0; }
.notice { background: #fff4e5; border-left: 4px solid #e69f00; padding: 8px 12px; margin: 12px 0; }
.recommendation { background: #f3f8fc; border-left: 4px solid var(--frontier); padding: 10px 14px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; background: #f6f6f6; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.recommended td { background: #fff1e8; font-weight: 600; }
.tag { display: inline-block; font-size: 12px; padding: 0 6px; margin-left: 6px; border-radius: 8px;
  border: 1px solid var(--line); color: var(--muted); font-weight: 400; }
.tag.recommended { border-color: var(--accent); color: var(--accent); }
.tag.frontier { border-color: var(--frontier); color: var(--frontier); }
.tag.weak { border-color: #e69f00; color: #8a5a00; }
tr.total td { font-weight: 600; }
code { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, "DejaVu Sans Mono", monospace;
  background: #f4f4f4; padding: 1px 4px; border-radius: 3px; overflow-wrap: anywhere; }
table.misses { table-layout: fixed; font-size: 14px; }
table.misses code.input { white-space: pre-wrap; display: block; }
table.misses code.reason { white-space: nowrap; display: inline-block; margin: 0 0 2px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
dt { color: var(--muted); }
dd { margin: 0; }
figure { margin: 24px 0; }
figure svg { width: 100%; height: auto; display: block; border: 1px solid var(--line); }
figcaption { color: var(--muted); margin-top: 6px; }
details { margin: 8px 0; }
summary { cursor: pointer; font-weight: 600; }
.more { color: var(--muted); font-style: italic; }
"#;

/// The whole page.
pub fn page(data: &Results, figures: &[Figure], notes: &[String]) -> String {
    let mut out = String::with_capacity(256 * 1024);
    out.push_str(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\" />\n\
         <title>leastgrant report</title>\n<style>",
    );
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<main>\n");
    header(&mut out, data);
    for note in notes {
        let _ = writeln!(out, "<p class=\"notice\">{}</p>", esc(note));
    }
    recommendation(&mut out, data);
    settings_table(&mut out, data);
    assumptions(&mut out, data);
    labels(&mut out, data);
    projects(&mut out, data);
    out.push_str("<h2 id=\"plots\">Plots</h2>\n");
    for f in figures {
        let _ = write!(
            out,
            "<figure id=\"{}\" aria-label=\"{}\">\n{}\n<figcaption>{}{}</figcaption>\n</figure>\n",
            esc(f.plot.name()),
            esc(f.plot.title()),
            inline_svg(&f.svg),
            esc(f.plot.caption()),
            if f.has_png {
                format!(
                    " Also in <code>plots/{0}.svg</code> and <code>plots/{0}.png</code>.",
                    esc(f.plot.name())
                )
            } else {
                format!(" Also in <code>plots/{}.svg</code>.", esc(f.plot.name()))
            }
        );
    }
    misses(&mut out, data);
    out.push_str(
        "<p class=\"more\">Written by <code>leastgrant report</code> from the replay's tables \
         (docs/formats.md). Figures in this page are self-contained SVG.</p>\n",
    );
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

fn header(out: &mut String, data: &Results) {
    let lede = text::lede(data);
    let _ = writeln!(
        out,
        "<h1>leastgrant report</h1>\n<p class=\"lede\">{}.</p>",
        esc(&lede)
    );
}

fn recommendation(out: &mut String, data: &Results) {
    out.push_str("<div class=\"recommendation\">\n");
    match &data.summary.recommended {
        Some((id, why)) => {
            let _ = writeln!(
                out,
                "<p><strong>Recommended: <code>{}</code></strong> — {}.</p>",
                esc(id),
                esc(why)
            );
        }
        None => out.push_str(
            "<p><strong>No setting is recommended</strong>: every setting lets through more \
             of what you refused than the miss budget allows. Raise the budget or try stricter \
             thresholds (<code>leastgrant simulate --miss-budget</code>).</p>\n",
        ),
    }
    out.push_str("</div>\n");
}

fn settings_table(out: &mut String, data: &Results) {
    out.push_str("<h2 id=\"settings\">Settings</h2>\n<table class=\"settings\">\n<thead><tr><th>setting</th>");
    for h in text::SETTING_HEADERS {
        let _ = write!(out, "<th class=\"n\">{}</th>", esc(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for s in &data.settings {
        let class = if s.recommended {
            " class=\"recommended\""
        } else {
            ""
        };
        let _ = write!(out, "<tr{class}><td><code>{}</code>", esc(&s.id));
        for mark in text::marks(s) {
            let _ = write!(out, "<span class=\"tag {mark}\">{mark}</span>");
        }
        out.push_str("</td>");
        for cell in text::setting_cells(s) {
            let _ = write!(out, "<td class=\"n\">{}</td>", esc(&cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str(
        "</tbody>\n</table>\n<p class=\"more\">runs freely, asks you, blocks: shares of all \
         calls. missed: calls you had refused that the setting would have let run, of all you \
         refused, with a one-sided 95% upper bound on that rate. friction: prompts you answered \
         yes. recommended: the fewest prompts within the miss budget; frontier: nothing else \
         asks less without missing more. ",
    );
    out.push_str(&esc(text::STAKE_NOTE));
    out.push_str(".</p>\n");
}

fn assumptions(out: &mut String, data: &Results) {
    out.push_str("<h2 id=\"assumptions\">Assumptions</h2>\n<dl>\n");
    for (key, value) in &data.summary.assumptions {
        let _ = writeln!(
            out,
            "<dt>{}</dt><dd>{}</dd>",
            esc(&text::assumption_label(key)),
            esc(&text::assumption_value(key, value))
        );
    }
    out.push_str("</dl>\n");
    if let Some(split) = &data.summary.time_split {
        out.push_str("<h3>Time split</h3>\n<table>\n<thead><tr><th></th><th>setting</th><th class=\"n\">asks you (later events)</th><th class=\"n\">missed (later events)</th></tr></thead>\n<tbody>\n");
        for (label, key) in [
            ("tuned on the earlier events", keys::TUNED_ON_EARLIER),
            ("best in hindsight on the later", keys::BEST_IN_HINDSIGHT),
        ] {
            let score = split.get(key).unwrap_or(&Value::Null);
            let id = score
                .get(keys::ID)
                .and_then(Value::as_str)
                .unwrap_or("none");
            let rate = score.get(keys::PROMPT_RATE).and_then(Value::as_f64);
            let misses = score.get(keys::MISSES).and_then(Value::as_u64);
            let refused = score.get(keys::REFUSED).and_then(Value::as_u64);
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(label),
                esc(id),
                rate.map(text::percent).unwrap_or_default(),
                match (misses, refused) {
                    (Some(m), Some(r)) => format!("{}/{}", text::count(m), text::count(r)),
                    _ => String::new(),
                }
            );
        }
        out.push_str("</tbody>\n</table>\n");
        if let Some(at) = split.get(keys::SPLIT_AT_US).and_then(Value::as_i64) {
            let _ = writeln!(
                out,
                "<p class=\"more\">split at {}; {}</p>",
                esc(&text::datetime(at)),
                esc(split.get(keys::WHY).and_then(Value::as_str).unwrap_or(""))
            );
        }
    }
}

/// Where the labels came from, per agent and in total (absent from older replays).
fn labels(out: &mut String, data: &Results) {
    let Some(labels) = data.labels() else {
        return;
    };
    out.push_str(
        "<h2 id=\"labels\">Labels</h2>\n<p>Where the replay's labels came from, per agent, \
         whatever the setting: how many calls a decision the history recorded labelled, and how \
         many were inferred.</p>\n<table class=\"labels\">\n<thead><tr><th>agent</th>",
    );
    for h in text::LABEL_HEADERS {
        let _ = write!(out, "<th class=\"n\">{}</th>", esc(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in labels.rows() {
        match row.agent {
            None => out.push_str("<tr class=\"total\"><td>total</td>"),
            Some(agent) => {
                let _ = write!(out, "<tr><td><code>{}</code>", esc(agent));
                if row.weak {
                    out.push_str("<span class=\"tag weak\">weakly labelled</span>");
                }
                out.push_str("</td>");
            }
        }
        for cell in text::label_cells(row.counts) {
            let _ = write!(out, "<td class=\"n\">{}</td>", esc(&cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n<p class=\"more\">");
    out.push_str(&esc(text::LABELS_NOTE));
    out.push('.');
    if let Some(weak) = labels.weak_note() {
        let _ = write!(out, " Weakly labelled: {}.", esc(weak));
    }
    out.push_str("</p>\n");
    if !labels.assumption.is_empty() {
        let _ = writeln!(
            out,
            "<p><strong>Assumption:</strong> {}.</p>",
            esc(&labels.assumption)
        );
    }
}

fn projects(out: &mut String, data: &Results) {
    let Some(setting) = data.focus().into_iter().next() else {
        return;
    };
    let mut rows: Vec<_> = data
        .projects
        .iter()
        .filter(|p| p.setting_id == setting.id)
        .collect();
    if rows.is_empty() {
        return;
    }
    rows.sort_by(|a, b| {
        b.events
            .cmp(&a.events)
            .then(a.project_key.cmp(&b.project_key))
    });
    let _ = writeln!(
        out,
        "<h2 id=\"projects\">Per project under <code>{}</code></h2>\n<table>\n<thead><tr><th>project</th><th class=\"n\">calls</th><th class=\"n\">asks you</th><th class=\"n\">missed</th><th class=\"n\">risky/routine</th></tr></thead>\n<tbody>",
        esc(&setting.id)
    );
    for p in rows.iter().take(PROJECTS_SHOWN) {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}/{}</td><td class=\"n\">{}</td></tr>",
            path(&p.project_key),
            text::count(p.events),
            text::percent(ratio(p.ask, p.events)),
            text::count(p.misses),
            text::count(p.refused),
            text::stake(p.misses_risky, p.misses)
        );
    }
    out.push_str("</tbody>\n</table>\n");
    if rows.len() > PROJECTS_SHOWN {
        let _ = writeln!(
            out,
            "<p class=\"more\">and {} more projects (projects.parquet)</p>",
            rows.len() - PROJECTS_SHOWN
        );
    }
}

/// The misses grouped by setting: the recommendation first, then the frontier's enforcing
/// settings, the other enforcing settings, and last `observe` and the baselines (which never
/// learned to let anything through on their own); the table's order within each.
pub fn grouped(data: &Results) -> Vec<(&crate::tables::Setting, Vec<&Miss>)> {
    let mut by_setting: BTreeMap<&str, Vec<&Miss>> = BTreeMap::new();
    for m in &data.misses {
        by_setting.entry(&m.setting_id).or_default().push(m);
    }
    let mut order: Vec<&crate::tables::Setting> = data.settings.iter().collect();
    order.sort_by_key(|s| {
        (
            !s.recommended,
            !(s.frontier && s.enforcing()),
            !s.enforcing(),
        )
    });
    order
        .into_iter()
        .filter_map(|s| {
            let mut list = by_setting.remove(s.id.as_str())?;
            list.sort_by(|a, b| {
                a.ts_us
                    .cmp(&b.ts_us)
                    .then(a.project_key.cmp(&b.project_key))
            });
            Some((s, list))
        })
        .collect()
}

fn misses(out: &mut String, data: &Results) {
    out.push_str("<h2 id=\"misses\">Misses</h2>\n");
    let groups = grouped(data);
    if groups.is_empty() {
        out.push_str("<p>No setting let through anything you had refused.</p>\n");
        return;
    }
    out.push_str(
        "<p>Calls you had refused that a setting would have let run, with the engine's reasons \
         at that moment.</p>\n",
    );
    if let Some(r) = data.recommended().filter(|r| r.misses == 0) {
        let _ = writeln!(
            out,
            "<p><code>{}</code> (recommended) let through nothing you had refused.</p>",
            esc(&r.id)
        );
    }
    for (i, (setting, list)) in groups.iter().enumerate() {
        let open = if i == 0 { " open" } else { "" };
        let _ = writeln!(
            out,
            "<details{open}>\n<summary><code>{}</code>{} — {} {} ({} risky, {} routine)</summary>\n<table class=\"misses\">\n<colgroup><col style=\"width:10%\" /><col style=\"width:7%\" /><col style=\"width:13%\" /><col style=\"width:8%\" /><col style=\"width:29%\" /><col style=\"width:14%\" /><col style=\"width:19%\" /></colgroup>\n<thead><tr><th>when</th><th>stake</th><th>project</th><th>tool</th><th>command or input</th><th>reason codes</th><th>reasons</th></tr></thead>\n<tbody>",
            esc(&setting.id),
            if setting.recommended {
                "<span class=\"tag recommended\">recommended</span>"
            } else {
                ""
            },
            list.len(),
            if list.len() == 1 { "miss" } else { "misses" },
            list.iter().filter(|m| m.risky).count(),
            list.iter().filter(|m| !m.risky).count()
        );
        // Risky misses first: they are the security regrets.
        let mut list = list.clone();
        list.sort_by_key(|m| !m.risky);
        for m in list.iter().take(MISSES_SHOWN) {
            let codes: Vec<String> = m
                .reason_codes
                .split(',')
                .filter(|c| !c.is_empty())
                .map(|c| format!("<code class=\"reason\">{}</code>", esc(c)))
                .collect();
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td><code class=\"input\">{}</code></td><td>{}</td><td>{}</td></tr>",
                esc(&m.ts_us.map(text::datetime).unwrap_or_default()),
                if m.risky { "risky" } else { "routine" },
                path(&m.project_key),
                esc(&m.tool_name),
                esc(&text::command_or_input(m)),
                codes.join(" "),
                esc(&m.reasons)
            );
        }
        out.push_str("</tbody>\n</table>\n");
        if list.len() > MISSES_SHOWN {
            let _ = writeln!(
                out,
                "<p class=\"more\">and {} more (misses.parquet)</p>",
                list.len() - MISSES_SHOWN
            );
        }
        out.push_str("</details>\n");
    }
}

/// A path, escaped, that may break after each separator.
fn path(p: &str) -> String {
    esc(p).replace('/', "/<wbr />")
}

/// The SVG document as an element of the page: without an XML declaration, and labelled for
/// screen readers by its plot's title.
fn inline_svg(svg: &str) -> String {
    let body = match svg.find("<svg") {
        Some(at) => &svg[at..],
        None => svg,
    };
    body.replacen("<svg", "<svg role=\"img\"", 1)
}
