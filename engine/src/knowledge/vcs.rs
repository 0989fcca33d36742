//! Version control: git, gh, glab, hg, svn, jj.
//!
//! Reads vs writes vs publishes; force-push (but not `--force-with-lease`) and history rewrites
//! are hard to undo; `git -c` keys that execute code make the command opaque; `rev:path`
//! arguments and `--output=` are files like any other.

use super::classification::{Classification, Invocation, Judge};
use crate::model::{Access, Capability as C, Reach, Reversibility, Scale};
use crate::shell::lex::Word;
use crate::static_index::{flags, name_set};

pub(super) const TABLE: &[(&[&str], Judge)] = &[
    (&["git"], git),
    (&["gh", "glab", "hub"], forge),
    (&["hg", "svn", "jj", "fossil"], other_vcs),
];

name_set! {
    /// Configuration keys known to be harmless to set for one command: presentation, identity and
    /// merge/diff behaviour that runs nothing. Every other key is treated as one that may run a
    /// program — git has too many (`core.pager`, `alias.*`, `filter.*.clean`, `tar.*.command`,
    /// `man.*.cmd`, `diff.*.textconv`, `credential.helper`, …) for a list of the dangerous ones to
    /// stay complete.
    static HARMLESS_KEYS = &[
        "user.name",
        "user.email",
        "user.signingkey",
        "core.quotepath",
        "core.autocrlf",
        "core.eol",
        "core.filemode",
        "core.ignorecase",
        "core.abbrev",
        "core.safecrlf",
        "color.ui",
        "color.diff",
        "color.status",
        "color.branch",
        "column.ui",
        "advice.detachedhead",
        "init.defaultbranch",
        "commit.gpgsign",
        "tag.gpgsign",
        "pull.rebase",
        "pull.ff",
        "push.default",
        "push.autosetupremote",
        "merge.conflictstyle",
        "merge.ff",
        "rebase.autosquash",
        "rebase.autostash",
        "diff.renames",
        "diff.algorithm",
        "diff.mnemonicprefix",
        "log.date",
        "log.decorate",
        "format.pretty",
        "status.short",
        "status.showuntrackedfiles",
        "fetch.prune",
        "gc.auto",
        "maintenance.auto",
        "safe.directory",
        "protocol.version",
        "http.postbuffer",
        "pack.threads",
        "checkout.defaultremote",
    ];
}

/// A configuration key whose value may be a program git runs (anything not known harmless).
pub fn config_key_executes(key: &str) -> bool {
    !HARMLESS_KEYS.contains(&key.to_ascii_lowercase())
}

name_set! {
    static GIT_READ = &[
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "annotate",
        "shortlog",
        "describe",
        "rev-parse",
        "rev-list",
        "ls-files",
        "ls-tree",
        "ls-remote",
        "cat-file",
        "grep",
        "reflog",
        "whatchanged",
        "name-rev",
        "merge-base",
        "for-each-ref",
        "show-ref",
        "show-branch",
        "count-objects",
        "verify-commit",
        "verify-tag",
        "cherry",
        "range-diff",
        "check-ignore",
        "check-attr",
        "var",
        "version",
        "help",
        "fsck",
        "diff-tree",
        "diff-index",
        "diff-files",
        "shortlog",
    ];
}

name_set! {
    static GIT_WRITE = &[
        "add",
        "commit",
        "checkout",
        "switch",
        "restore",
        "merge",
        "rebase",
        "cherry-pick",
        "revert",
        "stash",
        "tag",
        "branch",
        "mv",
        "rm",
        "init",
        "clone",
        "fetch",
        "pull",
        "reset",
        "worktree",
        "notes",
        "apply",
        "am",
        "submodule",
        "sparse-checkout",
        "gc",
        "prune",
        "repack",
        "maintenance",
        "bisect",
        "clean",
        "update-index",
        "update-ref",
        "symbolic-ref",
        "lfs",
        "mergetool",
        "format-patch",
    ];
}

fn git(inv: &Invocation<'_>) -> Classification {
    for key in inv.config_keys {
        if config_key_executes(key) {
            return Classification::opaque(
                C::ExecUnknown,
                &format!("`git -c {key}=…` runs a program"),
            );
        }
    }
    let valued = flags![
        "-m",
        "-F",
        "--message",
        "--file",
        "-b",
        "-B",
        "-C",
        "-u",
        "--author",
        "--format",
        "--pretty",
        "-n",
        "--depth",
        "--since",
        "--until",
        "-S",
        "-G",
        "--grep",
        "-L",
        "--date",
    ];
    let positionals = inv.positionals(valued);
    let sub = positionals.first().map(|w| w.text.as_str()).unwrap_or("");
    let rest: Vec<&Word> = positionals.get(1..).unwrap_or(&[]).to_vec();
    let mut j = match sub {
        "" => Classification::new(C::ExecVcsRead),
        "config" => git_config(inv, &rest),
        "push" => git_push(inv, &rest),
        "branch" if inv.has_any(flags!["-D", "-d", "--delete", "-m", "-M", "-c", "-C", "-f"]) => {
            Classification::new(C::ExecVcsWrite).reversibility(if inv.has("-D") {
                Reversibility::Hard
            } else {
                Reversibility::Easy
            })
        }
        "branch" | "tag" | "stash" | "remote" | "worktree" | "notes" | "submodule"
            if rest.is_empty()
                || matches!(
                    rest.first().map(|w| w.text.as_str()),
                    Some("list" | "show" | "-v")
                ) =>
        {
            if sub == "stash" && rest.is_empty() {
                Classification::new(C::ExecVcsWrite)
            } else {
                Classification::new(C::ExecVcsRead)
            }
        }
        "remote" => {
            if matches!(
                rest.first().map(|w| w.text.as_str()),
                Some("add" | "set-url" | "rename" | "remove" | "rm")
            ) {
                Classification::new(C::ExecVcsWrite)
            } else {
                Classification::new(C::ExecVcsRead)
            }
        }
        "reset" if inv.has("--hard") => {
            Classification::new(C::ExecVcsWrite).reversibility(Reversibility::Hard)
        }
        "clean" => {
            if inv.has_any(flags!["-n", "--dry-run"]) {
                Classification::new(C::ExecVcsRead)
            } else {
                Classification::new(C::FsDelete)
                    .scale(Scale::Many)
                    .reversibility(Reversibility::Irreversible)
                    .reach(Reach::Workspace)
            }
        }
        // `git restore` and a checkout of paths discard uncommitted work: a pathspec is anything
        // after `--`, or a word that looks like a path (`./`, `src/`, `.`).
        "restore" => Classification::new(C::ExecVcsWrite).reversibility(Reversibility::Hard),
        "checkout"
            if rest
                .iter()
                .any(|w| w.text == "." || w.text.starts_with("./") || w.text.ends_with('/'))
                || inv.has_any(flags!["-f", "--force"])
                || inv.args.iter().any(|w| w.text == "--") =>
        {
            Classification::new(C::ExecVcsWrite).reversibility(Reversibility::Hard)
        }
        "stash"
            if rest
                .first()
                .is_some_and(|w| matches!(w.text.as_str(), "clear" | "drop")) =>
        {
            Classification::new(C::ExecVcsWrite).reversibility(Reversibility::Irreversible)
        }
        "rebase" | "filter-branch" | "filter-repo" | "replace" => {
            if inv.has_any(flags!["-x", "--exec", "-i", "--interactive"]) || sub != "rebase" {
                Classification::opaque(
                    C::ExecVcsWrite,
                    "rewrites history running commands or an editor",
                )
            } else {
                Classification::new(C::ExecVcsWrite).reversibility(Reversibility::Hard)
            }
        }
        "apply" | "am" => {
            if inv.has_any(flags!["--check", "--stat", "--numstat", "--summary"]) {
                Classification::new(C::ExecVcsRead)
            } else {
                Classification::opaque(C::ExecVcsWrite, "the patch decides which files change")
            }
        }
        "bisect" if matches!(rest.first().map(|w| w.text.as_str()), Some("run")) => {
            Classification::opaque(C::ExecUnknown, "bisect run executes a script")
        }
        "submodule" if matches!(rest.first().map(|w| w.text.as_str()), Some("foreach")) => {
            Classification::opaque(C::ExecUnknown, "submodule foreach runs shell text")
        }
        "clone" | "fetch" | "pull" | "ls-remote" => {
            let j = if sub == "ls-remote" {
                Classification::new(C::ExecVcsRead)
            } else {
                Classification::new(C::ExecVcsWrite)
            };
            if inv.has_any(flags![
                "--upload-pack",
                "-u",
                "--config",
                "--template",
                "-c"
            ]) || inv
                .args
                .iter()
                .any(|w| w.text.starts_with("--upload-pack=") || w.text.starts_with("--template="))
            {
                return Classification::opaque(
                    C::ExecUnknown,
                    "runs a program named on the command line",
                );
            }
            let mut j = j.reach(Reach::Network);
            if sub == "clone" {
                // The destination directory is written.
                let urlish: Vec<&Word> = rest
                    .iter()
                    .copied()
                    .filter(|w| !is_remote(&w.text))
                    .collect();
                j = j.with_paths(urlish, Access::Write);
                if let [source] = rest.as_slice() {
                    // With no directory, git clones into one named after the repository
                    // (`.git` dropped; `--bare` adds it), which may be a link to an empty
                    // directory elsewhere.
                    let text = source.text.trim_end_matches('/');
                    let text = text.strip_suffix("/.git").unwrap_or(text);
                    let name = text.rsplit(['/', ':']).next().unwrap_or(text);
                    let name = name.strip_suffix(".git").unwrap_or(name);
                    let known = !matches!(name, "" | "." | "..") && !crate::glob::is_glob(name);
                    j.targets.push((Word::plain("."), Access::Write));
                    j = match known {
                        true if inv.has_any(flags!["--bare", "--mirror"]) => {
                            j.landing(format!("{name}.git"))
                        }
                        true => j.landing(name.to_string()),
                        false => j.landing("*".to_string()),
                    };
                }
            }
            j
        }
        "archive" => {
            let mut j = Classification::new(C::ExecVcsRead);
            if let Some(out) = inv.any_value(flags!["-o", "--output"]) {
                j.capability = C::FsWriteWorkspace;
                j.targets.push((out, Access::Write));
            }
            if inv.has("--remote") {
                j = j.reach(Reach::Network);
            }
            j
        }
        "send-email" | "request-pull" | "daemon" | "http-backend" | "instaweb" | "credential"
        | "credential-store" | "credential-cache" => Classification::opaque(
            C::ExecUnknown,
            "talks to mail, network daemons or credential stores",
        ),
        "difftool" | "mergetool" | "gui" | "citool" | "gitk" | "web--browse" => {
            Classification::opaque(C::ExecUnknown, "launches an external tool")
        }
        s if GIT_READ.contains(s) => {
            if s == "grep"
                && (inv.has("--open-files-in-pager")
                    || inv.args.iter().any(|w| w.text.starts_with("-O")))
            {
                return Classification::opaque(
                    C::ExecUnknown,
                    "opens the matches in a program named on the command line",
                );
            }
            if s == "reflog"
                && rest
                    .first()
                    .is_some_and(|w| matches!(w.text.as_str(), "expire" | "delete"))
            {
                return Classification::new(C::ExecVcsWrite)
                    .reversibility(Reversibility::Irreversible);
            }
            if matches!(s, "diff" | "log" | "show") && inv.has("--ext-diff") {
                return Classification::opaque(C::ExecUnknown, "an external diff program runs");
            }
            if matches!(s, "diff" | "log" | "show") && inv.has("--no-index") {
                // `git diff --no-index` reads arbitrary paths.
                return Classification::new(C::FsReadWorkspace).with_paths(rest, Access::Read);
            }
            let mut j = Classification::new(C::ExecVcsRead);
            // Paths after `--` are read (their contents appear in logs and diffs).
            let after_dashes = inv.args.iter().skip_while(|w| w.text != "--").skip(1);
            j = j.with_paths(after_dashes, Access::Read);
            // `rev:path` reads a file from history: the path matters (a committed `.env`).
            for word in &rest {
                if let Some((_, path)) = word.text.split_once(':')
                    && !path.is_empty()
                    && !is_remote(&word.text)
                {
                    let mut w = (*word).clone();
                    w.set_text(path.to_string());
                    j.targets.push((w, Access::Read));
                }
            }
            j
        }
        "worktree" if matches!(rest.first().map(|w| w.text.as_str()), Some("add" | "move")) => {
            let paths = rest.get(1..2).unwrap_or(&[]).iter().copied();
            Classification::new(C::ExecVcsWrite).with_paths(paths, Access::Write)
        }
        s if GIT_WRITE.contains(s) => {
            let mut j = Classification::new(C::ExecVcsWrite);
            if matches!(
                s,
                "commit" | "merge" | "rebase" | "cherry-pick" | "revert" | "am" | "tag"
            ) && inv.has_any(flags!["-e", "--edit"])
            {
                j.opaque = Some("opens an editor".to_string());
            }
            if s == "commit" && inv.has("--no-verify") {
                // Skipping hooks is a choice a person makes.
                j = j.reversibility(Reversibility::Hard);
            }
            // `git add`'s operands are paths whose contents go into the index, whether or not
            // they look like paths (`git add src`).
            if s == "add" {
                let paths = rest
                    .iter()
                    .filter(|w| !w.text.starts_with(['-', ':']) && w.text != "add");
                j = j.with_paths(paths.copied(), Access::Read);
            }
            // Pathspec magic (`:(top)../x`, `:/x`, `:(glob,icase)x`) names paths from the
            // repository's top, not the working directory: not a plain path.
            for word in rest.iter().filter(|w| w.text.starts_with(':')) {
                let path = match word.text.strip_prefix(":(") {
                    Some(magic) => magic.split_once(')').map_or("", |(_, p)| p),
                    None => word.text.trim_start_matches([':', '/', '!', '^']),
                };
                j.opaque = Some(format!(
                    "the pathspec `{}` uses magic, which the engine does not follow",
                    word.text
                ));
                if !path.is_empty() {
                    let mut w = (*word).clone();
                    w.set_text(path.to_string());
                    j.targets.push((w, Access::Read));
                }
            }
            j
        }
        _ => Classification::opaque(C::ExecUnknown, "an unknown git subcommand (or an alias)"),
    };
    // `--output=file` writes.
    if let Some(out) = inv
        .attached_value(flags!["--output"])
        .or_else(|| inv.value(flags!["--output"]).cloned())
    {
        j.capability = if j.capability.is_read_only() {
            C::FsWriteWorkspace
        } else {
            j.capability
        };
        j.targets.push((out, Access::Write));
    }
    j
}

fn is_remote(text: &str) -> bool {
    text.contains("://") || (text.contains('@') && text.contains(':'))
}

fn git_config(inv: &Invocation<'_>, rest: &[&Word]) -> Classification {
    // `git config set KEY VALUE`, `get`, `unset`… (git 2.46+) name the action first.
    let rest: Vec<&Word> = match rest.first().map(|w| w.text.as_str()) {
        Some("get" | "list") => return Classification::new(C::ExecVcsRead),
        Some("set" | "unset" | "rename-section" | "remove-section" | "edit") => {
            rest.get(1..).unwrap_or(&[]).to_vec()
        }
        _ => rest.to_vec(),
    };
    if inv.has_any(flags!["-e", "--edit"]) {
        return Classification::opaque(C::ExecVcsWrite, "opens an editor on the configuration");
    }
    let file = inv.any_value(flags!["-f", "--file", "--blob"]);
    let reading = inv.has_any(flags![
        "--get",
        "--get-all",
        "--get-regexp",
        "-l",
        "--list",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "--get-urlmatch",
    ]) || rest.len() == 1;
    if reading {
        return Classification::new(C::ExecVcsRead).with_paths(file.as_ref(), Access::Read);
    }
    let key = rest
        .first()
        .map(|w| w.text.to_ascii_lowercase())
        .unwrap_or_default();
    let global = inv.has_any(flags!["--global", "--system"]) || file.is_some();
    if config_key_executes(&key) {
        return Classification::opaque(
            C::ExecVcsWrite,
            &format!("sets `{key}`, which runs a program"),
        )
        .reach(Reach::Machine);
    }
    if global {
        // `--global` writes `~/.gitconfig`; `--system` writes `/etc/gitconfig`.
        let file = if inv.has("--system") {
            "/etc/gitconfig"
        } else {
            "~/.gitconfig"
        };
        let mut j = Classification::new(C::FsWriteOutside);
        j.targets.push((Word::plain(file), Access::Write));
        j
    } else {
        Classification::new(C::ExecVcsWrite)
    }
}

fn git_push(inv: &Invocation<'_>, rest: &[&Word]) -> Classification {
    let mut j = Classification::new(C::ExecVcsPublish);
    let force = inv.has_any(flags![
        "-f", "--force", "--mirror", "--prune", "--delete", "-d"
    ]) || rest
        .iter()
        .any(|w| w.text.starts_with('+') || w.text.starts_with(':'));
    if force {
        j = j.reversibility(Reversibility::Irreversible);
    }
    if inv.has_any(flags!["--receive-pack", "--exec"]) {
        j.opaque = Some("runs a program named on the command line".to_string());
    }
    const PROTECTED: &[&str] = &["main", "master", "production", "prod", "release", "trunk"];
    if rest.iter().any(|w| {
        let branch = w
            .text
            .rsplit(':')
            .next()
            .unwrap_or(&w.text)
            .trim_start_matches('+');
        PROTECTED.contains(&branch)
    }) && force
    {
        j = j.reach(Reach::Production);
    }
    j
}

fn forge(inv: &Invocation<'_>) -> Classification {
    let (sub, verb) = inv.first_positionals(flags![
        "-R",
        "--repo",
        "-t",
        "--title",
        "-b",
        "--body",
        "-F",
        "--body-file",
        "-L",
        "--limit",
        "-q",
        "--jq",
        "--json",
        "-H",
        "--hostname",
        "-s",
        "--state",
        "-X",
        "--method",
        "-f",
        "-F",
        "--field",
        "--raw-field",
        "--template",
        "-l",
        "--label",
    ]);
    const READ_VERBS: &[&str] = &[
        "list", "view", "status", "diff", "checks", "search", "ls", "show", "browse", "",
    ];
    match sub {
        "auth" if verb == "token" || inv.has_any(flags!["--show-token", "-t"]) => {
            Classification::new(C::SecretRead)
        }
        "auth" if matches!(verb, "status") => Classification::new(C::ExecInspect),
        "auth" => Classification::opaque(C::SecretRead, "handles credentials interactively"),
        "api" => {
            let method = inv
                .any_value(flags!["-X", "--method"])
                .map(|w| w.text.to_ascii_uppercase());
            let writes = method.as_deref().is_some_and(|m| m != "GET")
                || inv.has_any(flags!["-f", "-F", "--field", "--raw-field", "--input"]);
            if writes {
                Classification::new(C::ExecVcsPublish)
            } else {
                Classification::new(C::NetFetch)
            }
        }
        "extension" | "ext" | "alias" | "codespace" | "cs" | "copilot" => Classification::opaque(
            C::ExecUnknown,
            "runs an extension, an alias or a remote environment",
        ),
        "secret" | "variable" | "ssh-key" | "gpg-key" => {
            if READ_VERBS.contains(&verb) {
                Classification::new(C::ExecCloudRead)
            } else {
                Classification::new(C::ExecVcsPublish).reversibility(Reversibility::Hard)
            }
        }
        "repo" if matches!(verb, "clone") => {
            Classification::new(C::ExecVcsWrite).reach(Reach::Network)
        }
        "repo" if matches!(verb, "delete" | "archive" | "rename" | "edit") => {
            Classification::new(C::ExecVcsPublish).reversibility(Reversibility::Irreversible)
        }
        "pr" | "issue" | "release" | "run" | "workflow" | "repo" | "gist" | "label" | "project"
        | "cache" | "ruleset" | "mr" | "ci" => {
            if READ_VERBS.contains(&verb) {
                Classification::new(C::NetFetch)
            } else if sub == "pr" && matches!(verb, "checkout" | "co") {
                Classification::new(C::ExecVcsWrite).reach(Reach::Network)
            } else if matches!(verb, "download") {
                Classification::new(C::FsWriteWorkspace).reach(Reach::Network)
            } else {
                Classification::new(C::ExecVcsPublish)
            }
        }
        "browse" | "status" | "search" | "help" | "version" | "" => {
            Classification::new(C::NetFetch)
        }
        _ => Classification::opaque(C::ExecUnknown, "an unknown forge subcommand"),
    }
}

fn other_vcs(inv: &Invocation<'_>) -> Classification {
    let sub = inv.sub(flags!["-R", "--repository", "-r", "-m", "--message"]);
    match sub.as_str() {
        "status" | "st" | "log" | "diff" | "show" | "annotate" | "blame" | "cat" | "files"
        | "info" | "heads" | "branches" | "tags" | "summary" | "op" | "list" | "ls" => {
            Classification::new(C::ExecVcsRead)
        }
        "push" | "git" if inv.program == "jj" && sub == "git" => {
            Classification::new(C::ExecVcsPublish)
        }
        "push" | "commit" | "ci" if inv.program == "svn" => Classification::new(C::ExecVcsPublish),
        "push" | "outgoing" => Classification::new(C::ExecVcsPublish),
        "add" | "commit" | "ci" | "new" | "describe" | "squash" | "split" | "update" | "up"
        | "pull" | "checkout" | "co" | "rebase" | "abandon" | "revert" | "branch" | "bookmark"
        | "edit" | "restore" | "move" | "rm" => Classification::new(C::ExecVcsWrite),
        _ => Classification::opaque(C::ExecUnknown, "an unknown version-control subcommand"),
    }
}
