//! The settings table a person acts on, as `simulate`, `run` and `merge` print it.

use leastgrant_replay::MissBudgetOn;
use leastgrant_replay::replay::LabelCounts;
use leastgrant_replay::summary::{Summary, UPPER_Z, rate, wilson_upper_bound};

/// The table a person acts on.
pub fn table_text(summary: &Summary) -> String {
    let json = summary.to_json();
    let events = summary.settings.first().map_or(0, |s| s.total().events);
    let mut out = format!(
        "{events} events in {} projects, {} settings and baselines replayed ({:.1}% of actions understood)\n\n",
        summary.projects,
        summary.settings.len(),
        100.0 * json["actions_understood"].as_f64().unwrap_or(0.0)
    );
    let width = summary
        .settings
        .iter()
        .map(|s| s.setting.id.len())
        .max()
        .unwrap_or(7)
        .max(7);
    out.push_str(&format!(
        "  {:width$}  {:>11}  {:>8}  {:>6}  {:>22}  {:>13}  {:>8}\n",
        "setting",
        "runs freely",
        "asks you",
        "blocks",
        "missed (upper bound)",
        "risky/routine",
        "friction"
    ));
    let recommended = summary.recommend(None);
    let frontier = summary.frontier();
    for (i, s) in summary.settings.iter().enumerate() {
        let t = s.total();
        let mark = if recommended == Some(i) {
            '*'
        } else if frontier.get(i).copied().unwrap_or(false) {
            '+'
        } else {
            ' '
        };
        let missed = format!(
            "{}/{} (≤{:.1}%)",
            t.miss,
            t.refused,
            100.0 * wilson_upper_bound(t.miss, t.refused, UPPER_Z)
        );
        let stake = format!("{}/{}", t.miss_risky, t.miss_routine());
        out.push_str(&format!(
            "{mark} {:width$}  {:>10.1}%  {:>7.1}%  {:>5.1}%  {:>22}  {:>13}  {:>8}\n",
            s.setting.id,
            100.0 * rate(t.allow, t.events),
            100.0 * rate(t.ask, t.events),
            100.0 * rate(t.deny, t.events),
            missed,
            stake,
            t.friction,
        ));
    }
    out.push_str(
        "\n* recommended   + on the frontier (nothing else asks less without missing more)\n\
         risky: misses at tier ≥ 2 or near a floor; routine: the rest (a command a person stopped \
         is friction of another kind)\n",
    );
    if summary
        .settings
        .iter()
        .any(|s| s.setting.posture() == "native")
    {
        out.push_str(
            "native.<setting>: no hook — only the exact allow rules `export --to` writes from that \
             setting's envelope as it learns, matched as each agent matches them (no floors over \
             a compound command, no session taint); other tools and other calls ask\n",
        );
    }
    match recommended {
        Some(i) => out.push_str(&format!(
            "recommended: {} — {}\n",
            summary.settings[i].setting.id,
            summary.why(i, None)
        )),
        None => out.push_str(&format!(
            "recommended: none — every setting lets through more than {:.0}% of {}; \
             raise --miss-budget or try stricter thresholds\n",
            100.0 * summary.miss_budget,
            match summary.miss_budget_on {
                MissBudgetOn::All => "what you refused",
                MissBudgetOn::Risky => "the risky calls you refused",
            }
        )),
    }
    if let Some(split) = json.get("time_split") {
        let tuned = &split["tuned_on_earlier"];
        if tuned.is_object() {
            out.push_str(&format!(
                "time split: tuned on the earlier part → {}; on the later part it asks {:.1}% \
                 and missed {}/{} (best in hindsight: {})\n",
                tuned["id"].as_str().unwrap_or("?"),
                100.0 * tuned["prompt_rate"].as_f64().unwrap_or(0.0),
                tuned["misses"],
                tuned["refused"],
                split["best_in_hindsight_on_later"]["id"]
                    .as_str()
                    .unwrap_or("none"),
            ));
        }
    }
    out.push_str(&format!(
        "assumption: {}\n",
        json["assumptions"]["unattended_meaning"]
            .as_str()
            .unwrap_or("")
    ));
    out.push_str(&labels_text(summary));
    for note in &summary.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

/// Where the labels came from, per agent and in total: how many calls a recorded decision
/// labelled and how many were inferred, and which agents are weakly labelled.
fn labels_text(summary: &Summary) -> String {
    let line = |name: &str, c: &LabelCounts| {
        let mut text = format!(
            "  {name}: {} calls, {} labelled by a recorded decision, {} by inference",
            c.events, c.observed, c.inferred
        );
        if c.unjudged > 0 {
            text.push_str(&format!(
                " ({} ran on configuration, a hook or the classifier: observed at most)",
                c.unjudged
            ));
        }
        if c.classifier_denied > 0 {
            text.push_str(&format!(
                ", {} denied by the auto-mode classifier",
                c.classifier_denied
            ));
        }
        text.push_str(&format!(", {} unlabeled\n", c.unlabeled));
        if c.standing > 0 {
            text.push_str(&format!(
                "    standing approvals (settings files, `granted` evidence from the file's time): \
                 {} in force, granting {} signatures of its calls; {} too broad to be a \
                 signature (not granted), {} unusable\n",
                c.standing, c.standing_signatures, c.standing_too_broad, c.standing_unusable
            ));
        }
        text
    };
    let mut out = String::from("labels:\n");
    let mut total = LabelCounts::default();
    for (agent, counts) in &summary.labels {
        total.merge(counts);
        out.push_str(&line(agent, counts));
        if agent == leastgrant_ingest::schema::agent::CODEX {
            out.push_str(
                "    weakly labelled: Codex records neither approvals nor most denials, so its \
                 refusals are rarely seen and its misses undercounted\n",
            );
        }
    }
    if summary.labels.len() > 1 {
        out.push_str(&line("total", &total));
    }
    out.push_str(&format!("  assumption: {}\n", summary.labels_assumption()));
    out
}
