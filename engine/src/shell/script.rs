//! Script flattening: a script's simple commands become one list of effective commands.
//!
//! An [`Effective`] command is a simple command with its wrappers peeled and what peeling
//! learned (the wrappers, an opaque or unread program, a changed directory, files a wrapper
//! loads). Each command starts from a template (a command inside `sh -c` inherits the outer
//! command's wrappers, environment and written text), is peeled by the unwrapper, and the
//! commands whose input is piped from a network fetch (`curl … | sh`, also through a decoder
//! such as `base64 -d`) are marked.

use super::lex::{Redirect, Word};
use super::parse::{SimpleCommand, Surroundings};
use super::quote::push_word;

/// A wrapper that was peeled, kept because it changes the judgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Wrapper {
    Privilege,
    Env,
    Timing,
    Detach,
    ShellEval,
    StdinArgs,
    FindExec,
    Runner,
    FetchRun,
}

impl Wrapper {
    /// The tag's name in explanations.
    pub fn as_str(self) -> &'static str {
        match self {
            Wrapper::Privilege => "privilege",
            Wrapper::Env => "env",
            Wrapper::Timing => "timing",
            Wrapper::Detach => "detach",
            Wrapper::ShellEval => "shell-eval",
            Wrapper::StdinArgs => "stdin-args",
            Wrapper::FindExec => "find-exec",
            Wrapper::Runner => "runner",
            Wrapper::FetchRun => "fetch-run",
        }
    }
}

/// A command with its wrappers peeled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Effective {
    /// The program's base name (empty for a command that is only assignments or redirects).
    pub program: String,
    /// The program as written (`./run.sh`, `/usr/bin/git`).
    pub program_path: String,
    /// Its arguments.
    pub args: Vec<Word>,
    /// Assignments in force for it (prefix and `env NAME=value`).
    pub assignments: Vec<(String, Word)>,
    /// Its redirections.
    pub redirects: Vec<Redirect>,
    /// Where it sits in the script.
    pub surroundings: Surroundings,
    /// Wrappers peeled off it, outermost first.
    pub wrappers: Vec<Wrapper>,
    /// Why the program that runs is not known, when it is not.
    pub opaque: Option<String>,
    /// What runs is code the engine cannot read (a hijacking assignment, shell text from input
    /// or computed, `trap`, a runner pointed at another toolchain or repository): a floor.
    pub unread: bool,
    /// Some arguments come from elsewhere (stdin, a `find` walk).
    pub args_unknown: bool,
    /// A directory the wrapper changes into (`env -C`, `git -C`).
    pub chdir: Option<Word>,
    /// Files a wrapper's own options make it read or run (`uv run --env-file F`,
    /// `--project DIR`, `--script F`): targets of the command it runs.
    pub loads: Vec<(Word, crate::model::Access)>,
    /// `git -c` keys, lower-cased and sorted.
    pub config_keys: Vec<String>,
    /// Paths a `find -exec` walks: the inner command touches what is below them.
    pub walked_paths: Vec<Word>,
    /// Its standard input carries bytes a network fetch wrote (`curl … | sh`).
    pub fed_from_network: bool,
    /// The package runner it was started through (`npx`, `uv`), which the signature keeps.
    pub runner: Option<String>,
    /// The simple command as written, wrappers included (for a command inside `sh -c`, the
    /// outer command).
    pub written: String,
    /// `written` is exactly the program and its arguments, each spelled as `push_word` spells
    /// it: nothing was peeled off the command as written, so the text rules match is `written`
    /// itself and is not built a second time.
    pub written_is_words: bool,
}

impl Effective {
    pub(super) fn opaque(&mut self, why: &str) {
        if self.opaque.is_none() {
            self.opaque = Some(why.to_string());
        }
    }

    /// Opaque, and what runs is code the engine cannot read.
    pub(super) fn unread(&mut self, why: &str) {
        self.opaque(why);
        self.unread = true;
    }
}

/// Flattens a script into its effective commands: each command started from `template` and
/// peeled by `peel` (the unwrapper's, passed in because peeling shell text flattens a script in
/// turn), and the commands that read what a network fetch wrote into their pipeline (directly,
/// or through a decoder such as `base64 -d`) marked.
pub(super) fn flatten(
    commands: Vec<SimpleCommand>,
    template: &Effective,
    peel: fn(Effective, &mut Vec<Effective>),
) -> Vec<Effective> {
    // Only the commands whose input is piped from others are looked at after peeling: their
    // positions and where their input comes from (nearly always none: no list allocated).
    let piped: Vec<(usize, (usize, usize))> = commands
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.surroundings.piped_from.map(|from| (i, from)))
        .collect();
    // Every command's effective commands in one list, each command's as a range of it: no list
    // per command, and nothing moved a second time to flatten them.
    let mut all: Vec<Effective> = Vec::with_capacity(commands.len());
    // The ranges are only asked when some command's input is piped (no list otherwise).
    let mut bounds: Vec<(usize, usize)> = if piped.is_empty() {
        Vec::new()
    } else {
        Vec::with_capacity(commands.len())
    };
    for command in commands {
        let first = all.len();
        peel(start_from(template, command), &mut all);
        if !piped.is_empty() {
            bounds.push((first, all.len()));
        }
    }
    // The effective commands of commands `start..end`.
    let span = |start: usize, end: usize| -> (usize, usize) {
        let from = bounds.get(start).map_or(0, |b| b.0);
        let to = end
            .checked_sub(1)
            .and_then(|last| bounds.get(last))
            .map_or(from, |b| b.1);
        (from, to.max(from))
    };
    if piped.is_empty() {
        // No command reads another's output: none is fed from the network.
        return all;
    }
    let mut fed = vec![false; bounds.len()];
    for &(i, (start, end)) in &piped {
        let (from, to) = if start < end && end <= bounds.len() {
            span(start, end)
        } else {
            (0, 0)
        };
        let upstream = all.get(from..to).unwrap_or(&[]);
        let from_network = upstream.iter().any(|e| {
            FETCHERS.contains(&e.program.as_str())
                || e.fed_from_network && DECODERS.contains(&e.program.as_str())
        });
        let relayed = fed.get(start..end).unwrap_or(&[]).iter().any(|f| *f)
            && upstream
                .iter()
                .any(|e| DECODERS.contains(&e.program.as_str()));
        if let Some(slot) = fed.get_mut(i) {
            *slot = from_network || relayed;
        }
    }
    for (&(first, last), fed) in bounds.iter().zip(fed) {
        if fed {
            for effective in all.get_mut(first..last).unwrap_or(&mut []) {
                effective.fed_from_network = true;
            }
        }
    }
    all
}

/// Programs whose output is bytes from the network.
const FETCHERS: &[&str] = &[
    "curl", "wget", "aria2c", "http", "https", "xh", "fetch", "nc", "ncat", "socat",
];

/// Programs that pass bytes through, possibly decoded.
const DECODERS: &[&str] = &[
    "base64", "base32", "xxd", "openssl", "gunzip", "zcat", "rev", "tr", "cat", "tee", "dd", "sed",
];

/// A command's starting point for peeling: the template's wrappers and environment, then the
/// command's own words.
pub(super) fn start_from(template: &Effective, command: SimpleCommand) -> Effective {
    // The template's lists are nearly always empty (a top-level command): the command's own
    // are then moved, not copied into a new list.
    let assignments = if template.assignments.is_empty() {
        command.assignments
    } else {
        let mut assignments = template.assignments.clone();
        assignments.extend(command.assignments);
        assignments
    };
    let redirects = if template.redirects.is_empty() {
        command.redirects
    } else {
        let mut redirects = template.redirects.clone();
        redirects.extend(command.redirects);
        redirects
    };
    let written = if template.written.is_empty() {
        // Sized for the words and their separators (quotes, if any, may grow it once).
        let mut out = String::with_capacity(
            command
                .words
                .iter()
                .map(|w| w.text.len() + 1)
                .sum::<usize>(),
        );
        for (i, word) in command.words.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            push_word(&mut out, word);
        }
        out
    } else {
        template.written.clone()
    };
    Effective {
        args: command.words,
        assignments,
        redirects,
        surroundings: command.surroundings,
        wrappers: template.wrappers.clone(),
        args_unknown: template.args_unknown,
        written_is_words: template.written.is_empty(),
        written,
        ..Effective::default()
    }
}
