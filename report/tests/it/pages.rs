//! The pages: `index.html` is one self-contained document with the table, the assumptions, the
//! plots inline and the misses escaped; `report.md` says the same for terminals; bad input
//! gives an error that says what to do.

use leastgrant_report::{FontChoice, Options, ReportError, write_report_with};

use crate::fixture::{self, HOSTILE, Shape};
use crate::plots::check_xml;

fn svg_only() -> Options {
    Options {
        font: FontChoice::None,
    }
}

#[test]
fn index_is_self_contained_with_the_table_and_an_escaped_miss() {
    let dir = fixture::scratch("index");
    fixture::write(&dir.join("replay"), Shape::default());
    let written = write_report_with(&dir.join("replay"), &dir.join("report"), &svg_only()).unwrap();
    assert_eq!(written.index, dir.join("report/index.html"));
    let html = fixture::read(&written.index);
    // Nothing is loaded from anywhere.
    for external in [
        "src=\"http",
        "href=\"http",
        "src='http",
        "href='http",
        "<link",
        "<img",
        "@import",
        "url(",
    ] {
        assert!(!html.contains(external), "index.html has `{external}`");
    }
    assert!(html.contains("Content-Security-Policy"));
    // The data's markup is text, never markup.
    assert!(!html.contains("<script"), "a raw <script> reached the page");
    assert!(!html.contains("<i>and</i>"));
    assert!(!html.contains("<gamma>"));
    assert!(!html.contains("<b>really</b>"));
    let escaped = HOSTILE
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(
        html.contains(&escaped),
        "the hostile command is shown, escaped"
    );
    assert!(html.contains("&lt;gamma&gt; &amp; co"));
    // The table: its header, the recommendation and the frontier marked.
    for header in [
        "<th>setting</th>",
        ">runs freely</th>",
        ">asks you</th>",
        ">blocks</th>",
        ">missed (upper bound)</th>",
        ">risky/routine</th>",
        ">friction</th>",
    ] {
        assert!(html.contains(header), "the table lacks `{header}`");
    }
    let row = html
        .split("<tr class=\"recommended\">")
        .nth(1)
        .expect("a recommended row")
        .split("</tr>")
        .next()
        .unwrap()
        .to_string();
    assert!(row.contains("assist.c0.5-0.5-0.8.d1"), "{row}");
    assert!(
        row.contains("tag recommended") && row.contains("tag frontier"),
        "{row}"
    );
    assert!(row.contains("1/40 (≤7.1%)"), "{row}");
    // Misses split by stake: the recommendation's one miss is routine (a `git push` of the
    // fixture), shown as 0 risky / 1 routine in the table and in its misses' heading.
    assert!(row.contains("<td class=\"n\">0/1</td>"), "{row}");
    assert_eq!(html.matches("<span class=\"tag frontier\">").count(), 5);
    // Assumptions, plots inline, misses.
    assert!(html.contains("miss budget (share of refused calls)</dt><dd>2.0%"));
    assert!(html.contains("calls per learning-curve window</dt><dd>50"));
    assert_eq!(html.matches("<svg").count(), 6, "six inline plots");
    for name in fixture::PLOTS {
        assert!(html.contains(&format!("<figure id=\"{name}\"")), "{name}");
    }
    assert!(html.contains("<h2 id=\"misses\">Misses</h2>"));
    assert!(html.contains("<code class=\"reason\">learned.confirmed</code>"));
    // The recommendation's misses come first, and are open.
    let first = html.split("<details").nth(1).unwrap();
    assert!(first.starts_with(" open>"), "{}", &first[..40]);
    assert!(first.contains("assist.c0.5-0.5-0.8.d1"));
    assert!(
        first.contains("1 miss (0 risky, 1 routine)"),
        "{}",
        &first[..200]
    );
    assert!(first.contains("<td>routine</td>"));
    // The page as a whole is well-formed (void elements are written self-closed).
    check_xml(&html);
}

#[test]
fn report_md_has_the_table_the_plots_and_the_misses_escaped() {
    let dir = fixture::scratch("markdown");
    fixture::write(&dir.join("replay"), Shape::default());
    let written = write_report_with(&dir.join("replay"), &dir.join("report"), &svg_only()).unwrap();
    assert_eq!(written.markdown, dir.join("report/report.md"));
    let md = fixture::read(&written.markdown);
    assert!(md.contains(
        "| setting | runs freely | asks you | blocks | missed (upper bound) | risky/routine | friction |"
    ));
    assert!(md.contains("| **assist.c0.5-0.5-0.8.d1** (recommended, frontier) | 69.0% | 31.0% | 0.0% | 1/40 (≤7.1%) | 0/1 |"), "{md}");
    for name in fixture::PLOTS {
        assert!(md.contains(&format!("](plots/{name}.svg)")), "{name}");
    }
    assert!(!md.contains("<script"), "raw markup in report.md");
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // A pipe inside a cell does not split the row.
    let row = md
        .lines()
        .find(|l| l.contains("evil.example"))
        .expect("the hostile miss is listed");
    assert_eq!(row.matches(" | ").count(), 6, "{row}");
    assert!(md.contains("- miss budget (share of refused calls): 2.0%"));
}

#[test]
fn a_missing_results_dir_is_a_clear_error() {
    let dir = fixture::scratch("missing");
    let results = dir.join("no-such-replay");
    let err = write_report_with(&results, &dir.join("report"), &svg_only()).unwrap_err();
    assert!(matches!(err, ReportError::NoResults { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains(&results.display().to_string()),
        "{message}"
    );
    assert!(message.contains("does not exist"), "{message}");
    assert!(message.contains("leastgrant simulate"), "{message}");
    assert!(!dir.join("report").exists(), "nothing is written");
}

#[test]
fn a_directory_without_replay_output_is_a_clear_error() {
    let dir = fixture::scratch("empty");
    let err = write_report_with(&dir, &dir.join("report"), &svg_only()).unwrap_err();
    assert!(matches!(err, ReportError::NoResults { .. }), "{err:?}");
    assert!(
        err.to_string().contains("has no `settings.parquet`"),
        "{err}"
    );
}

#[test]
fn a_missing_column_is_named_with_its_table() {
    let dir = fixture::scratch("column");
    fixture::write(
        &dir,
        Shape {
            without_misses_column: true,
            ..Shape::default()
        },
    );
    let err = write_report_with(&dir, &dir.join("report"), &svg_only()).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, ReportError::Read { .. }), "{err:?}");
    assert!(message.contains("settings.parquet"), "{message}");
    assert!(message.contains("no `misses` column"), "{message}");
}

#[test]
fn results_without_the_optional_tables_still_make_a_report() {
    // The replay writes no table that would have no rows.
    let dir = fixture::scratch("minimal");
    fixture::write(
        &dir,
        Shape {
            minimal: true,
            ..Shape::default()
        },
    );
    let written = write_report_with(&dir, &dir.join("report"), &svg_only()).unwrap();
    let html = fixture::read(&written.index);
    assert!(html.contains("No setting let through anything you had refused."));
    assert_eq!(html.matches("<svg").count(), 6);
    let promotion = fixture::read(&dir.join("report/plots/time-to-promotion.svg"));
    assert!(promotion.contains("no setting promoted anything"));
    let friction = fixture::read(&dir.join("report/plots/friction.svg"));
    assert!(friction.contains("no prompts with a reason code"));
    let capabilities = fixture::read(&dir.join("report/plots/capabilities.svg"));
    assert!(capabilities.contains("no actions by capability"));
}

#[test]
fn results_without_capabilities_parquet_say_the_mix_is_missing() {
    // A replay older than the table, or one that found no actions.
    let dir = fixture::scratch("no-capabilities");
    fixture::write(&dir, Shape::default());
    std::fs::remove_file(dir.join("capabilities.parquet")).unwrap();
    let written = write_report_with(&dir, &dir.join("report"), &svg_only()).unwrap();
    assert!(
        written
            .notes
            .iter()
            .all(|n| !n.contains("could not be drawn")),
        "{:?}",
        written.notes
    );
    let svg = fixture::read(&dir.join("report/plots/capabilities.svg"));
    check_xml(&svg);
    assert!(svg.contains("no actions by capability in the results"));
    assert!(
        !svg.contains("share of actions (%)"),
        "no axis without data"
    );
    let html = fixture::read(&written.index);
    assert_eq!(html.matches("<svg").count(), 6);
    assert!(html.contains("<figure id=\"capabilities\""));
    check_xml(&html);
    let md = fixture::read(&written.markdown);
    assert!(md.contains("](plots/capabilities.svg)"));
}

#[test]
fn the_capability_mix_follows_the_outcomes_on_both_pages() {
    let dir = fixture::scratch("capabilities-pages");
    fixture::write(&dir.join("replay"), Shape::default());
    let written = write_report_with(&dir.join("replay"), &dir.join("report"), &svg_only()).unwrap();
    let html = fixture::read(&written.index);
    let figure = |name: &str| {
        html.find(&format!("<figure id=\"{name}\""))
            .unwrap_or_else(|| panic!("no {name} figure"))
    };
    assert!(figure("outcomes") < figure("capabilities"));
    assert!(figure("capabilities") < figure("friction"));
    let section = html[figure("capabilities")..]
        .split("</figure>")
        .next()
        .unwrap();
    assert!(section.contains("aria-label=\"What the agents did: capability mix\""));
    assert!(section.contains("share of actions (%)"));
    assert!(section.contains("<code>plots/capabilities.svg</code>"));
    let md = fixture::read(&written.markdown);
    let heading = |title: &str| {
        md.find(&format!("### {title}\n"))
            .unwrap_or_else(|| panic!("no `{title}` section"))
    };
    let at = heading("What the agents did: capability mix");
    assert!(heading("What each setting would have done") < at);
    assert!(at < heading("Friction budget: why it still asks"));
    assert!(md[at..].contains("![What the agents did: capability mix](plots/capabilities.svg)"));
}

#[test]
fn both_pages_say_where_the_labels_came_from_per_agent() {
    let dir = fixture::scratch("labels");
    fixture::write(&dir.join("replay"), Shape::default());
    let written = write_report_with(&dir.join("replay"), &dir.join("report"), &svg_only()).unwrap();
    let html = fixture::read(&written.index);
    let section = html
        .split("<h2 id=\"labels\">Labels</h2>")
        .nth(1)
        .expect("a labels section")
        .split("<h2")
        .next()
        .unwrap();
    // After the assumptions, before the plots.
    assert!(html.find("id=\"assumptions\"") < html.find("id=\"labels\""));
    assert!(html.find("id=\"labels\"") < html.find("id=\"plots\""));
    let row = |start: &str| {
        section
            .split(start)
            .nth(1)
            .unwrap_or_else(|| panic!("no row `{start}` in {section}"))
            .split("</tr>")
            .next()
            .unwrap()
            .to_string()
    };
    let claude = row("<tr><td><code>claude-code</code>");
    assert!(
        claude.contains("<td class=\"n\">1,500</td><td class=\"n\">0 (0.0%)</td><td class=\"n\">1,380 (92.0%)</td><td class=\"n\">60</td><td class=\"n\">20</td><td class=\"n\">100</td>"),
        "{claude}"
    );
    assert!(!claude.contains("weakly labelled"));
    // Codex is marked weakly labelled, and the note says what that means.
    let codex = row("<tr><td><code>codex</code>");
    assert!(
        codex.contains("<span class=\"tag weak\">weakly labelled</span>"),
        "{codex}"
    );
    assert!(section.contains("Weakly labelled: the agent records neither approvals"));
    let observed = row("<tr><td><code>&lt;b&gt;copilot&lt;/b&gt; | x</code>");
    assert!(observed.contains("90 (90.0%)"), "{observed}");
    // The total over every agent.
    let total = row("<tr class=\"total\"><td>total</td>");
    assert!(total.contains("<td class=\"n\">2,000</td><td class=\"n\">90 (4.5%)</td><td class=\"n\">1,780 (89.0%)</td>"), "{total}");
    assert!(section.contains(&format!(
        "<strong>Assumption:</strong> {}.",
        fixture::LABELS_ASSUMPTION
    )));
    assert!(
        !section.contains("<b>copilot"),
        "markup from the data reached the page"
    );
    check_xml(&html);

    let md = fixture::read(&written.markdown);
    assert!(md.contains("\n## Labels\n"), "{md}");
    assert!(md.contains("| agent | calls | by a recorded decision | by inference | ran on configuration, a hook or the classifier | denied by the classifier | unlabeled |"));
    assert!(
        md.contains("| claude-code | 1,500 | 0 (0.0%) | 1,380 (92.0%) | 60 | 20 | 100 |"),
        "{md}"
    );
    assert!(
        md.contains("| codex (weakly labelled) | 400 | 0 (0.0%) | 390 (97.5%) | 0 | 0 | 10 |"),
        "{md}"
    );
    assert!(
        md.contains("| **total** | 2,000 | 90 (4.5%) | 1,780 (89.0%) | 60 | 20 | 110 |"),
        "{md}"
    );
    let hostile = md
        .lines()
        .find(|l| l.contains("copilot"))
        .expect("the third agent's row");
    assert_eq!(
        hostile.matches(" | ").count(),
        6,
        "a pipe in the name split the row: {hostile}"
    );
    assert!(!hostile.contains("<b>"), "{hostile}");
    assert!(md.contains(&format!("**Assumption:** {}.", fixture::LABELS_ASSUMPTION)));
}

#[test]
fn a_replay_without_labels_has_no_labels_section() {
    let dir = fixture::scratch("no-labels");
    fixture::write(
        &dir,
        Shape {
            without_labels: true,
            ..Shape::default()
        },
    );
    let written = write_report_with(&dir, &dir.join("report"), &svg_only()).unwrap();
    assert!(!fixture::read(&written.index).contains("id=\"labels\""));
    assert!(!fixture::read(&written.markdown).contains("## Labels"));
}
