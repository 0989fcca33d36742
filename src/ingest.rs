//! `leastgrant ingest`: every agent history on this machine (or the sources given) into the
//! events table, with a progress bar on a terminal and a summary of what was skipped and why.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use leastgrant_ingest::run::{Progress, SourceFile, SourceKind, Summary, run};
use serde_json::json;

#[derive(Args, Default)]
pub struct IngestArgs {
    /// A Claude Code `projects` directory (repeatable) [default: `$CLAUDE_CONFIG_DIR`,
    /// `~/.claude/projects`, `~/.config/claude/projects`].
    #[arg(long = "claude", value_name = "DIR")]
    claude: Vec<PathBuf>,
    /// A SpecStory history directory (`.specstory/history`, repeatable) [default: the current
    /// project's, when it has one].
    #[arg(long = "specstory", value_name = "DIR")]
    specstory: Vec<PathBuf>,
    /// A Cursor `state.vscdb` (repeatable) [default: Cursor's global database on this machine].
    #[arg(long = "cursor", value_name = "PATH")]
    cursor: Vec<PathBuf>,
    /// A Codex CLI sessions directory (repeatable) [default: `$CODEX_HOME` or `~/.codex`:
    /// `sessions/` and `archived_sessions/`].
    #[arg(long = "codex", value_name = "DIR")]
    codex: Vec<PathBuf>,
    /// A leastgrant state directory whose hook ledger to read (`ledger.jsonl` and its rotations;
    /// repeatable) [default: this machine's, `$LEASTGRANT_HOME` or `~/.leastgrant`].
    #[arg(long = "ledger", value_name = "DIR")]
    ledger: Vec<PathBuf>,
    /// Where the events table goes [default: `~/.leastgrant/data`].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    json: bool,
}

/// The sources to read: those named, else everything discoverable.
pub fn sources(args: &IngestArgs, home: &Path, cwd: &Path) -> Vec<SourceFile> {
    let IngestArgs {
        claude,
        specstory,
        cursor,
        codex,
        ledger,
        ..
    } = args;
    let explicit = !claude.is_empty()
        || !specstory.is_empty()
        || !cursor.is_empty()
        || !codex.is_empty()
        || !ledger.is_empty();
    let claude_roots: Vec<PathBuf> = if explicit {
        claude.to_vec()
    } else {
        leastgrant_ingest::claude::default_roots(
            home,
            std::env::var("CLAUDE_CONFIG_DIR").ok().as_deref(),
        )
    };
    let specstory_dirs: Vec<PathBuf> = if explicit {
        specstory.to_vec()
    } else {
        cwd.ancestors()
            .map(|d| d.join(".specstory/history"))
            .filter(|d| d.is_dir())
            .take(1)
            .collect()
    };
    let cursor_paths: Vec<PathBuf> = if explicit {
        cursor.clone()
    } else {
        let appdata = std::env::var_os("APPDATA").map(PathBuf::from);
        leastgrant_ingest::cursor::default_paths(home, appdata.as_deref())
    };
    let mut files: Vec<SourceFile> = cursor_paths
        .into_iter()
        .map(|path| SourceFile {
            kind: SourceKind::Cursor,
            path,
        })
        .collect();
    let codex_roots: Vec<PathBuf> = if explicit {
        codex.clone()
    } else {
        let codex_home = std::env::var_os("CODEX_HOME").map(PathBuf::from);
        leastgrant_ingest::codex::default_roots(home, codex_home.as_deref())
    };
    for root in codex_roots {
        files.extend(
            leastgrant_ingest::codex::discover(&root)
                .into_iter()
                .map(|path| SourceFile {
                    kind: SourceKind::Codex,
                    path,
                }),
        );
    }
    let ledger_dirs: Vec<PathBuf> = if explicit {
        ledger.clone()
    } else {
        vec![default_state_dir(home)]
    };
    for dir in ledger_dirs {
        files.extend(
            leastgrant_ingest::ledger::discover(&dir)
                .into_iter()
                .map(|path| SourceFile {
                    kind: SourceKind::Ledger,
                    path,
                }),
        );
    }
    for root in claude_roots {
        files.extend(
            leastgrant_ingest::claude::discover(&root)
                .into_iter()
                .map(|path| SourceFile {
                    kind: SourceKind::Claude,
                    path,
                }),
        );
    }
    for dir in specstory_dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .map(|path| SourceFile {
                    kind: SourceKind::SpecStory,
                    path,
                }),
        );
    }
    files
}

pub fn run_command(args: &IngestArgs) -> Result<ExitCode> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let out = args.out.clone().unwrap_or_else(|| default_data_dir(&home));
    let files = sources(args, &home, &cwd);
    let bar = (std::io::stderr().is_terminal() && !args.json).then(|| {
        let bar = ProgressBar::new(files.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} files  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let progress = |p: Progress| {
        if let Some(bar) = &bar {
            bar.set_position(p.files);
            bar.set_message(format!(
                "{:.1} MB, {} events",
                p.bytes as f64 / 1e6,
                p.events
            ));
        }
    };
    let summary = run(files, &out, &progress).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary_json(&summary, &out))?
        );
    } else {
        print!("{}", summary_text(&summary, &out));
    }
    Ok(ExitCode::SUCCESS)
}

/// `$LEASTGRANT_HOME/data`, else `~/.leastgrant/data`.
pub fn default_data_dir(home: &Path) -> PathBuf {
    default_state_dir(home).join("data")
}

/// leastgrant's state directory: `$LEASTGRANT_HOME`, else `~/.leastgrant` (the hook's rule).
pub fn default_state_dir(home: &Path) -> PathBuf {
    leastgrant_hook::state_dir(
        home,
        std::env::var_os("LEASTGRANT_HOME")
            .map(PathBuf::from)
            .as_deref(),
    )
}

fn summary_json(s: &Summary, out: &Path) -> serde_json::Value {
    json!({
        "events": s.events,
        "new_events": s.new_events,
        "duplicates": s.duplicates,
        "by_agent": s.by_agent,
        "by_outcome": s.by_outcome,
        "bad_lines": s.bad.0,
        "files": s.files_read,
        "files_unchanged": s.files_unchanged,
        "bytes": s.bytes_read,
        "table": out.display().to_string(),
    })
}

fn summary_text(s: &Summary, out: &Path) -> String {
    let mut text = format!(
        "read {} file(s) ({:.1} MB; {} unchanged), {} new event(s), {} duplicate(s) dropped\n",
        s.files_read,
        s.bytes_read as f64 / 1e6,
        s.files_unchanged,
        s.new_events,
        s.duplicates
    );
    text.push_str(&format!(
        "the table at {} holds {} event(s)\n",
        out.display(),
        s.events
    ));
    for (agent, n) in &s.by_agent {
        text.push_str(&format!("  {agent}: {n}\n"));
    }
    let outcomes: Vec<String> = s
        .by_outcome
        .iter()
        .map(|(o, n)| format!("{o} {n}"))
        .collect();
    if !outcomes.is_empty() {
        text.push_str(&format!("  outcomes: {}\n", outcomes.join(", ")));
    }
    if !s.bad.is_empty() {
        text.push_str("skipped or repaired input:\n");
        for (reason, n) in &s.bad.0 {
            text.push_str(&format!("  {reason}: {n}\n"));
        }
    }
    text
}
