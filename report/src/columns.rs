//! The names the report reads from the replay's output: table files, their columns and the keys
//! of `summary.json`. The contract is `docs/formats.md`, section "Replay (`leastgrant
//! simulate`)"; this module is the only place in the report crate that spells a name from it.
//!
//! Must not: name anything the report does not read (the report depends on the published
//! tables, not on the replay crate, so a name here is a promise the replay has to keep).

/// `summary.json`: totals, assumptions and the recommendation.
pub const SUMMARY_FILE: &str = "summary.json";

/// `settings.parquet`: one row per setting, in the replay's grid order.
pub mod settings {
    /// The table's file name.
    pub const FILE: &str = "settings.parquet";
    /// The setting's id (`assist.c0.5-0.5-0.8.d1`, `baseline.always-ask`, …).
    pub const SETTING_ID: &str = "setting_id";
    /// The posture (`baseline` for baselines).
    pub const POSTURE: &str = "posture";
    /// Whether the setting is a baseline.
    pub const BASELINE: &str = "baseline";
    /// Calls replayed.
    pub const EVENTS: &str = "events";
    /// Calls the setting let run.
    pub const ALLOW: &str = "allow";
    /// Calls the setting asked about.
    pub const ASK: &str = "ask";
    /// Calls the setting denied.
    pub const DENY: &str = "deny";
    /// Allowed calls the person had refused.
    pub const MISSES: &str = "misses";
    /// Asked or denied calls the person had refused.
    pub const CATCHES: &str = "catches";
    /// Allowed calls that ran.
    pub const SAVED: &str = "saved";
    /// Asked calls the person then approved.
    pub const FRICTION: &str = "friction";
    /// Denied calls the person approved.
    pub const FALSE_BLOCKS: &str = "false_blocks";
    /// Calls with no label.
    pub const UNLABELED: &str = "unlabeled";
    /// Refused calls (misses + catches).
    pub const REFUSED: &str = "refused";
    /// Misses of risky calls (an action at tier ≥ 2 or near a floor); the rest are routine.
    pub const MISSES_RISKY: &str = "misses_risky";
    /// One-sided 95% Wilson upper bound on misses / refused.
    pub const MISS_RATE_UPPER: &str = "miss_rate_upper";
    /// On the Pareto frontier of prompt rate against misses.
    pub const FRONTIER: &str = "frontier";
    /// The recommended setting.
    pub const RECOMMENDED: &str = "recommended";
    /// Signatures learning promoted.
    pub const PROMOTIONS: &str = "promotions";
}

/// `projects.parquet`: one row per setting and project.
pub mod projects {
    /// The table's file name.
    pub const FILE: &str = "projects.parquet";
    /// The setting's id.
    pub const SETTING_ID: &str = "setting_id";
    /// The project's key.
    pub const PROJECT_KEY: &str = "project_key";
    /// Calls replayed in the project.
    pub const EVENTS: &str = "events";
    /// Calls asked about.
    pub const ASK: &str = "ask";
    /// Allowed calls the person had refused.
    pub const MISSES: &str = "misses";
    /// Of those, risky calls.
    pub const MISSES_RISKY: &str = "misses_risky";
    /// Refused calls.
    pub const REFUSED: &str = "refused";
}

/// `curves.parquet`: one row per setting, project and point of a learning curve.
pub mod curves {
    /// The table's file name.
    pub const FILE: &str = "curves.parquet";
    /// The setting's id.
    pub const SETTING_ID: &str = "setting_id";
    /// The project's key.
    pub const PROJECT_KEY: &str = "project_key";
    /// `window` or `day`.
    pub const AXIS: &str = "axis";
    /// The point: window index or days since the project's first event.
    pub const X: &str = "x";
    /// Calls in the point.
    pub const EVENTS: &str = "events";
    /// Asks / calls in the point.
    pub const PROMPT_RATE: &str = "prompt_rate";
}

/// `bands.parquet`: one row per setting, axis and point: quantiles across projects.
pub mod bands {
    /// The table's file name.
    pub const FILE: &str = "bands.parquet";
    /// The setting's id.
    pub const SETTING_ID: &str = "setting_id";
    /// `window` or `day`.
    pub const AXIS: &str = "axis";
    /// The point.
    pub const X: &str = "x";
    /// Projects with a point there.
    pub const PROJECTS: &str = "projects";
    /// 25th percentile of the projects' prompt rates.
    pub const P25: &str = "p25";
    /// Median of the projects' prompt rates.
    pub const MEDIAN: &str = "median";
    /// 75th percentile of the projects' prompt rates.
    pub const P75: &str = "p75";
}

/// The learning-curve axis the report plots: windows of a fixed number of calls.
pub const AXIS_WINDOW: &str = "window";

/// `misses.parquet`: one row per miss.
pub mod misses {
    /// The table's file name.
    pub const FILE: &str = "misses.parquet";
    /// The setting's id.
    pub const SETTING_ID: &str = "setting_id";
    /// The project's key.
    pub const PROJECT_KEY: &str = "project_key";
    /// When the call was made (UTC).
    pub const TS: &str = "ts";
    /// The tool called.
    pub const TOOL_NAME: &str = "tool_name";
    /// The tool's input (JSON text).
    pub const TOOL_INPUT: &str = "tool_input";
    /// Reason codes, comma-separated, one per action.
    pub const REASON_CODES: &str = "reason_codes";
    /// The engine's own words.
    pub const REASONS: &str = "reasons";
    /// The call is risky (tier ≥ 2 or near a floor), not routine.
    pub const RISKY: &str = "risky";
}

/// `promotions.parquet`: one row per setting, project and promoted signature.
pub mod promotions {
    /// The table's file name.
    pub const FILE: &str = "promotions.parquet";
    /// The setting's id.
    pub const SETTING_ID: &str = "setting_id";
    /// Days from the signature's first sighting to its promotion.
    pub const DAYS_TO_PROMOTION: &str = "days_to_promotion";
}

/// `capabilities.parquet`: one row per project and capability (the same under every setting).
pub mod capabilities {
    /// The table's file name.
    pub const FILE: &str = "capabilities.parquet";
    /// The project's key.
    pub const PROJECT_KEY: &str = "project_key";
    /// The capability (`fs.read.workspace`, `exec.test`, `net.send`, …).
    pub const CAPABILITY: &str = "capability";
    /// Actions of that capability in the project.
    pub const ACTIONS: &str = "actions";
}

/// `friction.parquet`: one row per setting and reason code.
pub mod friction {
    /// The table's file name.
    pub const FILE: &str = "friction.parquet";
    /// The setting's id.
    pub const SETTING_ID: &str = "setting_id";
    /// The code of the action that asked (`baseline` for baselines).
    pub const REASON_CODE: &str = "reason_code";
    /// Prompts with that code.
    pub const COUNT: &str = "count";
}

/// Keys of `summary.json`.
pub mod summary {
    /// The assumptions the replay made (an object).
    pub const ASSUMPTIONS: &str = "assumptions";
    /// Projects replayed.
    pub const PROJECTS: &str = "projects";
    /// Share of actions the engine understood.
    pub const ACTIONS_UNDERSTOOD: &str = "actions_understood";
    /// `{"id", "why"}` or null.
    pub const RECOMMENDED: &str = "recommended";
    /// The recommendation's id, inside `recommended`.
    pub const ID: &str = "id";
    /// Why it was recommended, inside `recommended`.
    pub const WHY: &str = "why";
    /// Present with `--tune-until`.
    pub const TIME_SPLIT: &str = "time_split";
    /// Inside `time_split`: the setting tuned on the earlier events, scored on the later.
    pub const TUNED_ON_EARLIER: &str = "tuned_on_earlier";
    /// Inside `time_split`: the best setting on the later events, in hindsight.
    pub const BEST_IN_HINDSIGHT: &str = "best_in_hindsight_on_later";
    /// Inside `time_split`: when the split falls (UTC µs).
    pub const SPLIT_AT_US: &str = "split_at_us";
    /// Inside a time-split score: asks / calls.
    pub const PROMPT_RATE: &str = "prompt_rate";
    /// Inside a time-split score: misses.
    pub const MISSES: &str = "misses";
    /// Inside a time-split score: refused calls.
    pub const REFUSED: &str = "refused";
    /// The miss budget, inside `assumptions`.
    pub const MISS_BUDGET: &str = "miss_budget";
    /// What the miss budget counts, inside `assumptions`: `all` misses (absent: all) or `risky`.
    pub const MISS_BUDGET_ON: &str = "miss_budget_on";
    /// Events per learning-curve window, inside `assumptions`.
    pub const WINDOW_EVENTS: &str = "window_events";
    /// Where the labels came from, per agent and in total (an object; absent from replays
    /// written before it was kept).
    pub const LABELS: &str = "labels";

    /// Keys inside `labels`.
    pub mod labels {
        /// Agent → its counts.
        pub const AGENTS: &str = "agents";
        /// The counts over every agent.
        pub const TOTAL: &str = "total";
        /// The assumption behind the inferred labels, in a sentence.
        pub const ASSUMPTION: &str = "assumption";
        /// What a weakly labelled agent is, in a sentence.
        pub const WEAK_MEANING: &str = "weak_meaning";
        /// Calls.
        pub const EVENTS: &str = "events";
        /// Labelled by a decision the history recorded.
        pub const OBSERVED: &str = "observed";
        /// Labelled by inference.
        pub const INFERRED: &str = "inferred";
        /// Labelled calls that ran on configuration, a hook or the classifier.
        pub const UNJUDGED: &str = "unjudged";
        /// Denied by Claude Code's auto-mode classifier.
        pub const CLASSIFIER_DENIED: &str = "classifier_denied";
        /// No label.
        pub const UNLABELED: &str = "unlabeled";
        /// The agent records neither approvals nor most denials.
        pub const WEAK: &str = "weak";
    }
}

/// Ids of the baselines the learning curves compare against (`docs/formats.md`, "Baselines").
pub mod baselines {
    /// Every call asks.
    pub const ALWAYS_ASK: &str = "baseline.always-ask";
    /// The agent's read-only tools run; everything else asks.
    pub const AGENT_DEFAULTS: &str = "baseline.agent-defaults";
}
