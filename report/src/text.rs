//! Words and numbers the pages share: the settings table's cells, the misses' cells, dates, and
//! escaping for HTML and Markdown.
//!
//! Owns: how a number or a recorded call is shown to a person, so `index.html` and `report.md`
//! say the same thing. Must not: write files.

use serde_json::Value;

use crate::tables::{Miss, Results, Setting, ratio};

/// The opening sentence of both pages: how much was replayed, and how much was understood.
pub fn lede(data: &Results) -> String {
    use std::fmt::Write as _;
    let events = data.settings.iter().map(|s| s.events).max().unwrap_or(0);
    let mut lede = format!(
        "{} calls replayed under {} settings",
        count(events),
        data.settings.len()
    );
    if let Some(p) = data.summary.projects {
        lede = format!("{} projects, {lede}", count(p));
    }
    if let Some(u) = data.summary.actions_understood {
        let _ = write!(lede, "; the engine understood {} of actions", percent(u));
    }
    lede
}

/// A share as a percentage with one decimal: `28.4%`.
pub fn percent(share: f64) -> String {
    if share.is_finite() {
        format!("{:.1}%", 100.0 * share)
    } else {
        "–".into()
    }
}

/// A count with thousands separators: `12,345`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The cells of one row of the settings table, after the setting's id: runs freely, asks you,
/// blocks, missed (upper bound), friction.
pub fn setting_cells(s: &Setting) -> [String; 6] {
    [
        percent(ratio(s.allow, s.events)),
        percent(ratio(s.ask, s.events)),
        percent(ratio(s.deny, s.events)),
        format!(
            "{}/{} (≤{})",
            count(s.misses),
            count(s.refused),
            percent(s.miss_rate_upper)
        ),
        stake(s.misses_risky, s.misses),
        count(s.friction),
    ]
}

/// The settings table's header after the setting column.
pub const SETTING_HEADERS: [&str; 6] = [
    "runs freely",
    "asks you",
    "blocks",
    "missed (upper bound)",
    "risky/routine",
    "friction",
];

/// The labels table's header after the agent column.
pub const LABEL_HEADERS: [&str; 6] = [
    "calls",
    "by a recorded decision",
    "by inference",
    "ran on configuration, a hook or the classifier",
    "denied by the classifier",
    "unlabeled",
];

/// The cells of one row of the labels table, after the agent: counts, with the share of calls
/// for the two label sources.
pub fn label_cells(c: &crate::tables::LabelCounts) -> [String; 6] {
    let share = |n: u64| format!("{} ({})", count(n), percent(ratio(n, c.events)));
    [
        count(c.events),
        share(c.observed),
        share(c.inferred),
        count(c.unjudged),
        count(c.classifier_denied),
        count(c.unlabeled),
    ]
}

/// What the labels table's columns mean, for the note under it.
pub const LABELS_NOTE: &str = "by a recorded decision: the history says who decided (observed \
     labels, used as they are); by inference: read from the permission mode, the result text or \
     the unattended assumption; ran on configuration, a hook or the classifier: no person \
     decided, so these teach `observed` at most (counted among the labelled)";

/// Misses split by stake: `risky/routine`.
pub fn stake(risky: u64, misses: u64) -> String {
    format!("{}/{}", count(risky), count(misses.saturating_sub(risky)))
}

/// What a miss's stake means, for the notes under a table.
pub const STAKE_NOTE: &str = "risky: a call with an action at tier 2 or above, or near a floor; \
     routine: the rest, a command a person stopped, which is friction of another kind rather \
     than a security regret";

/// The marks of a setting: `recommended`, `frontier`, `baseline`.
pub fn marks(s: &Setting) -> Vec<&'static str> {
    let mut out = Vec::new();
    if s.recommended {
        out.push("recommended");
    }
    if s.frontier {
        out.push("frontier");
    }
    if s.baseline {
        out.push("baseline");
    }
    out
}

/// Longest command or input shown for a miss, in characters.
pub const INPUT_CHARS: usize = 600;

/// What a person recognises a call by: the shell command when there is one, else the file path,
/// URL, pattern, query or description, else the input as compact JSON; at most [`INPUT_CHARS`]
/// characters.
pub fn command_or_input(miss: &Miss) -> String {
    let text = match serde_json::from_str::<Value>(&miss.tool_input) {
        Ok(Value::Object(map)) => [
            "command",
            "file_path",
            "path",
            "url",
            "pattern",
            "query",
            "description",
            "summary",
        ]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| Value::Object(map).to_string()),
        Ok(other) => other.to_string(),
        Err(_) => miss.tool_input.clone(),
    };
    truncate(&text, INPUT_CHARS)
}

/// At most `max` characters, with `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `2025-03-01 14:05 UTC` from UTC microseconds.
pub fn datetime(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rest / 3600,
        (rest % 3600) / 60
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Text safe inside HTML elements and double-quoted attributes.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Text safe inside a Markdown table cell: no HTML, no emphasis, links or code spans, no pipe
/// and no line break.
pub fn markdown_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("&#124;"),
            '\n' | '\r' | '\t' => out.push(' '),
            // Links need brackets, so parentheses can stay.
            '\\' | '`' | '*' | '_' | '[' | ']' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// An assumption's label for a person; unknown keys are shown as they are.
pub fn assumption_label(key: &str) -> String {
    match key {
        "unattended_asks" => "asks on calls nobody answered".into(),
        "unattended_meaning" => "what that means".into(),
        "miss_budget" => "miss budget (share of refused calls)".into(),
        "miss_budget_on" => "misses the budget counts (all or risky)".into(),
        "risky" => "a risky miss".into(),
        "miss_rate" => "miss rate".into(),
        "rules" => "rules".into(),
        "window_events" => "calls per learning-curve window".into(),
        other => other.replace('_', " "),
    }
}

/// An assumption's value as text.
pub fn assumption_value(key: &str, value: &Value) -> String {
    match (key, value) {
        ("miss_budget", Value::Number(n)) => n.as_f64().map(percent).unwrap_or_default(),
        (_, Value::String(s)) => s.clone(),
        (_, other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_dates() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1234), "1,234");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(percent(0.284), "28.4%");
        assert_eq!(datetime(0), "1970-01-01 00:00 UTC");
        // 2024-02-29T13:45:00Z
        assert_eq!(datetime(1_709_214_300_000_000), "2024-02-29 13:45 UTC");
        assert_eq!(truncate("abcdef", 3), "abc…");
        assert_eq!(truncate("abc", 3), "abc");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            html("<script>\"x\" & 'y'</script>"),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;"
        );
        assert_eq!(
            markdown_cell("a|b `c` <i>\n*d*"),
            "a&#124;b \\`c\\` &lt;i&gt; \\*d\\*"
        );
    }
}
