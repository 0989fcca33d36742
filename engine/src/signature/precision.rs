//! What a signature abstracts, per program: the words that change only how an operation's output
//! is shown or which of the lines and files it already reaches are shown (a display flag, a count,
//! a line range, a search pattern, a test selector, a manual page), so `git status -s`, `git log
//! -5` and `sed -n 5,10p` learn as one operation with their neighbours.
//!
//! Only words listed here are abstracted; a flag or operand not listed stays literal, because an
//! unknown word may change reach, exposure or what runs (`git log --ext-diff`, `git diff
//! --output=FILE`, `rg --hidden`, `find -L`, `tail -f`, `pytest -p plugin`). Paths are never
//! abstracted here: where a path lies is the normaliser's business and always stays visible.
//! Knows no placement and decides nothing.

use crate::static_index::{Names, flags};

/// What the operands of a program that are not flags are, for its signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operands {
    /// Typed one by one by the normaliser (paths, URLs, hashes, …).
    Normal,
    /// Text a program prints (`echo done`): one `<text>` however many words.
    Text,
    /// Manual pages and section numbers (`man 5 crontab`): one `<topic>`.
    Topic,
    /// Test selectors (`cargo test main`, `pytest tests/x.py::t`): each placed as a path, and
    /// a selector in the project is dropped (it narrows what the learned run runs).
    Selector,
    /// The first operand is a sed script: a script that only prints lines is `<range>`.
    SedScript,
    /// The first operand is an awk program: one that only reads its input and prints (no
    /// command, pipe, redirection, `getline`, environment or loaded code) is `<text>`.
    AwkProgram,
}

/// The abstraction of one program (or one git/cargo/npm subcommand, or one `python -m` module).
#[derive(Clone, Copy)]
pub(crate) struct Precision {
    /// Flags dropped from the signature: they change only how the output is shown or select
    /// among what the operation already reaches. Also their `--flag=value` forms, and letters of
    /// a short-flag cluster.
    pub display: Names<'static>,
    /// Display flags that take the next word as their value (`-n 20`, `-k expr`, `-A 3`): flag
    /// and value dropped, and the attached forms (`-n20`, `--lines=20`).
    pub valued: Names<'static>,
    /// `-<digits>` is a count (`head -20`, `git log -5`): dropped.
    pub counts: bool,
    /// What the operands are.
    pub operands: Operands,
    /// `-p no:NAME` turns a plugin off (pytest): dropped; `-p NAME` loads one and stays.
    pub plugins_off: bool,
    /// Flags of `display` that this program spells for something else and keep (ripgrep's `-L`
    /// follows links, grep's lists files without a match).
    pub kept: Option<Names<'static>>,
    /// Flags after `--` that only change how the program the runner starts shows its results
    /// (libtest's `--nocapture`, `--test-threads=N`): dropped, with their `=value` forms.
    /// Anything else after `--` stays (`--logfile FILE` writes).
    pub tail_display: Option<Names<'static>>,
}

impl Precision {
    const fn new(display: Names<'static>, valued: Names<'static>) -> Precision {
        Precision {
            display,
            valued,
            counts: false,
            operands: Operands::Normal,
            plugins_off: false,
            kept: None,
            tail_display: None,
        }
    }

    const fn tail_display(mut self, flags: Names<'static>) -> Precision {
        self.tail_display = Some(flags);
        self
    }

    /// A word after `--` that is a display flag of the program the runner starts.
    pub(crate) fn drops_after_dashes(&self, text: &str) -> bool {
        self.tail_display.is_some_and(|names| {
            names.contains(text)
                || text
                    .split_once('=')
                    .is_some_and(|(flag, _)| flag.starts_with("--") && names.contains(flag))
        })
    }

    const fn keeping(mut self, kept: Names<'static>) -> Precision {
        self.kept = Some(kept);
        self
    }

    const fn counts(mut self) -> Precision {
        self.counts = true;
        self
    }

    const fn plugins_off(mut self) -> Precision {
        self.plugins_off = true;
        self
    }

    const fn operands(mut self, operands: Operands) -> Precision {
        self.operands = operands;
        self
    }

    /// `-p no:NAME` (or `-pno:NAME`): a plugin turned off, which loads nothing.
    pub(crate) fn turns_plugin_off(&self, flag: &str, value: Option<&str>) -> bool {
        self.plugins_off
            && match flag.strip_prefix("-p") {
                Some("") => value.is_some_and(|v| v.starts_with("no:")),
                Some(attached) => attached.starts_with("no:"),
                None => false,
            }
    }

    /// The flag word is dropped whole: a display flag, a display flag's `=value` form, an
    /// attached value of a valued display flag, or a count.
    pub(crate) fn drops_flag(&self, text: &str) -> bool {
        if self.keeps(text) {
            return false;
        }
        if self.display.contains(text) {
            return true;
        }
        if self.counts
            && text.len() > 1
            && text.bytes().skip(1).all(|b| b.is_ascii_digit())
            && text.starts_with('-')
        {
            return true;
        }
        if let Some((flag, _)) = text.split_once('=')
            && (self.display.contains(flag) || self.valued.contains(flag))
        {
            return true;
        }
        // `-n20`, `-kmain`: a short valued display flag with its value attached.
        !text.starts_with("--")
            && text.len() > 2
            && text.get(..2).is_some_and(|flag| self.valued.contains(flag))
    }

    /// The flag takes the next word as its value, and both are dropped.
    pub(crate) fn drops_value_after(&self, text: &str) -> bool {
        self.valued.contains(text)
    }

    /// One letter of a short-flag cluster (`-la`) is a display flag.
    pub(crate) fn drops_letter(&self, flag: &str) -> bool {
        self.display.contains(flag) && !self.keeps(flag)
    }

    fn keeps(&self, flag: &str) -> bool {
        self.kept.is_some_and(|kept| kept.contains(flag))
    }
}

/// The abstraction for `program` (its base name; for `python -m X`, `X`) whose first operand is
/// `sub`, if the table has one.
pub(crate) fn precision(program: &str, sub: &str) -> Option<Precision> {
    let none = flags![];
    Some(match (program, sub) {
        ("git", "status") => Precision::new(
            flags![
                "-s",
                "--short",
                "-b",
                "--branch",
                "--porcelain",
                "--long",
                "-v",
                "--verbose",
                "--show-stash",
                "--ahead-behind",
                "--no-ahead-behind",
                "--column",
                "--no-column",
                "-z",
                "--renames",
                "--no-renames",
                "-u",
                "-uno",
                "-unormal",
                "-uall",
                "--untracked-files",
                "--ignored",
            ],
            none,
        )
        // A pathspec in the project narrows what status reports (`git status src`).
        .operands(Operands::Selector),
        ("git", "log" | "show" | "diff" | "shortlog" | "reflog" | "whatchanged") => Precision::new(
            flags![
                "--oneline",
                "--graph",
                "--stat",
                "--shortstat",
                "--numstat",
                "--summary",
                "--name-only",
                "--name-status",
                "--decorate",
                "--no-decorate",
                "--abbrev-commit",
                "--no-abbrev-commit",
                "--pretty",
                "--format",
                "--date",
                "--relative-date",
                "-p",
                "-u",
                "--patch",
                "-s",
                "--no-patch",
                "--cached",
                "--staged",
                "--color",
                "--no-color",
                "--color-words",
                "--word-diff",
                "-w",
                "--ignore-all-space",
                "-b",
                "--ignore-space-change",
                "--reverse",
                "--all",
                "--no-merges",
                "--merges",
                "--first-parent",
                "--since",
                "--after",
                "--until",
                "--before",
                "--author",
                "--committer",
                "--grep",
                "-i",
                "--regexp-ignore-case",
                "--minimal",
                "--patience",
                "--histogram",
                "--unified",
                "--stat-width",
                "--no-prefix",
                "--abbrev",
                "--full-history",
                "--topo-order",
                "--date-order",
                "--left-right",
                "--cherry-pick",
                "--boundary",
                "-m",
                "--follow",
                "--no-renames",
                "-M",
                "-C",
                "-e",
                "-c",
                "--cc",
                "-z",
                "-R",
                "--exit-code",
                "--quiet",
                "-q",
                "--check",
                "--compact-summary",
                "--dirstat",
                "-l",
                "--list",
            ],
            flags!["-n", "--max-count", "-U"],
        )
        .counts(),
        ("git", "branch" | "tag" | "remote") => Precision::new(
            flags![
                "-v",
                "-vv",
                "--verbose",
                "-a",
                "--all",
                "-r",
                "--remotes",
                "-l",
                "--list",
                "--show-current",
                "--color",
                "--no-color",
                "--column",
                "--no-column",
                "--merged",
                "--no-merged",
                "--contains",
            ],
            flags!["--sort", "--format"],
        ),
        ("ls" | "exa" | "eza" | "lsd" | "dir" | "vdir", _) => Precision::new(
            flags![
                "-l",
                "-a",
                "-A",
                "-h",
                "-1",
                "-t",
                "-r",
                "-S",
                "-F",
                "-G",
                "-i",
                "-s",
                "-n",
                "-g",
                "-o",
                "-p",
                "-k",
                "-d",
                "-c",
                "-u",
                "-x",
                "-C",
                "-m",
                "-X",
                "-v",
                "-Q",
                "-N",
                "--all",
                "--almost-all",
                "--human-readable",
                "--color",
                "--classify",
                "--group-directories-first",
                "--full-time",
                "--time-style",
                "--long",
                "--icons",
                "--git",
                "--directory",
                "--inode",
                "--size",
                "--reverse",
                "--numeric-uid-gid",
                "--quoting-style",
                "--indicator-style",
                "--header",
            ],
            flags!["-w", "--width", "--sort", "-T", "--tabsize"],
        ),
        ("tree", _) => Precision::new(
            flags![
                "-a",
                "-d",
                "-f",
                "-i",
                "-C",
                "-n",
                "-h",
                "-s",
                "-p",
                "-u",
                "-g",
                "-D",
                "-F",
                "-q",
                "-N",
                "-v",
                "-t",
                "-c",
                "-r",
                "--dirsfirst",
                "--noreport",
                "--du",
            ],
            flags!["-L", "-P", "-I", "--charset"],
        ),
        ("du" | "df", _) => Precision::new(
            flags![
                "-h",
                "-s",
                "-c",
                "-k",
                "-m",
                "-a",
                "--summarize",
                "--human-readable",
                "--total",
                "--apparent-size",
                "-T",
                "-i",
                "-l",
            ],
            flags!["-d", "--max-depth"],
        ),
        ("cat" | "bat" | "batcat", _) => Precision::new(
            flags![
                "-n",
                "-b",
                "-A",
                "-v",
                "-E",
                "-T",
                "-e",
                "-t",
                "-s",
                "-u",
                "-p",
                "-P",
                "--number",
                "--number-nonblank",
                "--show-all",
                "--squeeze-blank",
                "--plain",
                "--paging",
                "--style",
                "--color",
                "--decorations",
                "--wrap",
            ],
            flags![
                "-l",
                "--language",
                "-r",
                "--line-range",
                "-H",
                "--highlight-line"
            ],
        ),
        ("head" | "tail", _) => Precision::new(
            flags!["-q", "-v", "--quiet", "--silent", "--verbose", "-z"],
            flags!["-n", "-c", "--lines", "--bytes"],
        )
        .counts(),
        ("wc", _) => Precision::new(
            flags![
                "-l",
                "-w",
                "-c",
                "-m",
                "-L",
                "--lines",
                "--words",
                "--bytes",
                "--chars",
                "--max-line-length",
            ],
            none,
        ),
        ("nl", _) => Precision::new(flags![], flags!["-b", "-w", "-n", "-s", "-v", "-i"]),
        ("less" | "more" | "most", _) => Precision::new(
            flags![
                "-N",
                "-S",
                "-R",
                "-r",
                "-i",
                "-I",
                "-F",
                "-X",
                "-M",
                "-m",
                "-n",
                "-s",
                "-E",
                "-e",
                "-q",
                "-Q",
                "--LINE-NUMBERS",
                "--chop-long-lines",
                "--RAW-CONTROL-CHARS",
                "--ignore-case",
                "--quit-if-one-screen",
                "--no-init",
            ],
            none,
        ),
        ("grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "zgrep" | "git-grep" | "ugrep", _) => {
            Precision::new(
                flags![
                    "-e",
                    "--regexp",
                    "-n",
                    "-i",
                    "-w",
                    "-x",
                    "-l",
                    "-L",
                    "-c",
                    "-H",
                    "-h",
                    "-o",
                    "-s",
                    "-q",
                    "-v",
                    "-E",
                    "-F",
                    "-G",
                    "-P",
                    "-I",
                    "-a",
                    "-b",
                    "-Z",
                    "-S",
                    "--line-number",
                    "--no-line-number",
                    "--ignore-case",
                    "--smart-case",
                    "--case-sensitive",
                    "--word-regexp",
                    "--line-regexp",
                    "--files-with-matches",
                    "--files-without-match",
                    "--count",
                    "--with-filename",
                    "--no-filename",
                    "--no-heading",
                    "--heading",
                    "--only-matching",
                    "--no-messages",
                    "--quiet",
                    "--silent",
                    "--invert-match",
                    "--extended-regexp",
                    "--fixed-strings",
                    "--basic-regexp",
                    "--perl-regexp",
                    "--binary-files",
                    "--text",
                    "--null",
                    "--color",
                    "--colour",
                    "--column",
                    "--vimgrep",
                    "--json",
                    "--stats",
                    "--trim",
                    "--pretty",
                    "--byte-offset",
                ],
                flags![
                    "-A",
                    "-B",
                    "-C",
                    "-m",
                    "--max-count",
                    "--context",
                    "--after-context",
                    "--before-context",
                    "--include",
                    "--exclude",
                    "--exclude-dir",
                    "-g",
                    "--glob",
                    "--iglob",
                    "-t",
                    "--type",
                    "-T",
                    "--type-not",
                    "-M",
                    "--max-columns",
                    "-d",
                    "--max-depth",
                    "--max-filesize",
                    "--sort",
                    "--sortr",
                ],
            )
            // ripgrep's `-L` is `--follow`: it walks through the links a repository ships.
            .keeping(if program == "rg" { flags!["-L"] } else { none })
        }
        ("find", _) => Precision::new(
            flags![
                "-name",
                "-iname",
                "-path",
                "-ipath",
                "-wholename",
                "-iwholename",
                "-regex",
                "-iregex",
                "-lname",
                "-ilname",
                "-print",
                "-print0",
                "-ls",
                "-empty",
                "-not",
                "!",
                "-o",
                "-or",
                "-a",
                "-and",
                "(",
                ")",
                "-prune",
                "-depth",
                "-mount",
                "-xdev",
                "-readable",
                "-writable",
                "-executable",
                "-nouser",
                "-nogroup",
            ],
            flags![
                "-type",
                "-xtype",
                "-maxdepth",
                "-mindepth",
                "-size",
                "-mtime",
                "-mmin",
                "-atime",
                "-amin",
                "-ctime",
                "-cmin",
                "-perm",
                "-user",
                "-group",
                "-uid",
                "-gid",
                "-links",
                "-printf",
                "-regextype",
            ],
        ),
        ("sed", _) => Precision::new(
            flags![
                "-n",
                "--quiet",
                "--silent",
                "-E",
                "-r",
                "--regexp-extended",
                "-u"
            ],
            none,
        )
        .operands(Operands::SedScript),
        // How differences are shown; `-r`, `-N`, `--to-file`, `--from-file`, `-x`/`-X` and
        // `--output`-like options stay, they change what is compared or read.
        ("diff", _) => Precision::new(
            flags![
                "-u",
                "-c",
                "-q",
                "-s",
                "-y",
                "-w",
                "-b",
                "-B",
                "-i",
                "-t",
                "-T",
                "-a",
                "-p",
                "-d",
                "--brief",
                "--report-identical-files",
                "--side-by-side",
                "--ignore-all-space",
                "--ignore-space-change",
                "--ignore-blank-lines",
                "--ignore-case",
                "--ignore-trailing-space",
                "--strip-trailing-cr",
                "--expand-tabs",
                "--initial-tab",
                "--text",
                "--show-c-function",
                "--minimal",
                "--color",
                "--suppress-common-lines",
                "--left-column",
            ],
            flags![
                "-U",
                "-C",
                "-W",
                "--unified",
                "--context",
                "--width",
                "--tabsize"
            ],
        )
        .counts(),
        // How jq prints; `-f`, `-L`, `--rawfile`, `--slurpfile`, `--args` stay.
        ("jq" | "gojq" | "jaq", _) => Precision::new(
            flags![
                "-r",
                "-j",
                "-c",
                "-S",
                "-M",
                "-C",
                "-e",
                "-a",
                "--raw-output",
                "--raw-output0",
                "--join-output",
                "--compact-output",
                "--sort-keys",
                "--monochrome-output",
                "--color-output",
                "--exit-status",
                "--ascii-output",
                "--tab",
                "--seq",
            ],
            flags!["--indent"],
        ),
        ("awk" | "gawk" | "mawk" | "nawk", _) => {
            Precision::new(flags![], flags!["-F"]).operands(Operands::AwkProgram)
        }
        ("echo", _) => Precision::new(flags!["-n", "-e", "-E"], none).operands(Operands::Text),
        ("man", _) => Precision::new(flags!["-a"], none).operands(Operands::Topic),
        ("pytest" | "py.test", _) => Precision::new(
            flags![
                "-q",
                "-v",
                "-vv",
                "-vvv",
                "-qq",
                "-x",
                "-s",
                "-l",
                "--quiet",
                "--verbose",
                "--exitfirst",
                "--showlocals",
                "--lf",
                "--last-failed",
                "--ff",
                "--failed-first",
                "--nf",
                "--new-first",
                "--sw",
                "--stepwise",
                "--no-header",
                "--no-summary",
                "--co",
                "--collect-only",
                "--durations-min",
                "--color",
                "--code-highlight",
                "--strict-markers",
                "--disable-warnings",
                "--runxfail",
                "--full-trace",
            ],
            flags![
                "-k",
                "-m",
                "--maxfail",
                "--tb",
                "--durations",
                "-r",
                "--capture",
            ],
        )
        .operands(Operands::Selector)
        .plugins_off(),
        ("cargo", "test" | "nextest" | "check" | "build" | "clippy") => Precision::new(
            flags![
                "-q",
                "--quiet",
                "-v",
                "-vv",
                "--verbose",
                "--lib",
                "--bins",
                "--tests",
                "--doc",
                "--examples",
                "--benches",
                "--all-targets",
                "--no-fail-fast",
                "--timings",
                "--locked",
                "--frozen",
                "--offline",
                "--workspace",
                "--all",
            ],
            flags!["--color", "--message-format", "-j", "--jobs"],
        )
        .operands(Operands::Selector)
        // libtest's own display and selection flags (`cargo test -- --nocapture`); its
        // `--logfile FILE` is not one of them.
        .tail_display(flags![
            "--nocapture",
            "--no-capture",
            "--show-output",
            "--test-threads",
            "--color",
            "-q",
            "--quiet",
            "--exact",
            "--ignored",
            "--include-ignored",
            "--skip",
        ]),
        ("npm" | "pnpm" | "yarn", "test" | "t") => Precision::new(
            flags!["--silent", "-s", "--quiet", "-q", "--color", "--no-color"],
            flags!["--loglevel"],
        ),
        _ => return None,
    })
}

/// A sed script that only prints, numbers, skips or stops at lines it addresses (`5,10p`,
/// `/TODO/p`, `$p`, `10q`, `=`): a range of what the file already shows, never a write, a read of
/// another file or a command.
/// An awk program that only reads its input and prints to standard output: no `system`, no
/// pipe or redirection, no `getline` (which reads any file or runs a command), no `ENVIRON`,
/// and no `@load`/`@include` of code. Conservative: `NR>1` reads as a redirection.
pub(crate) fn awk_reads_only(code: &str) -> bool {
    !(code.contains("system")
        || code.contains('|')
        || code.contains('>')
        || code.contains("getline")
        || code.contains("ENVIRON")
        || code.contains("PROCINFO")
        || code.contains("@load")
        || code.contains("@include")
        || code.contains("@namespace"))
}

pub(crate) fn sed_prints_only(script: &str) -> bool {
    !script.is_empty()
        && !script.contains(['{', '}'])
        && script.split([';', '\n']).all(|command| {
            let mut c = command.trim();
            loop {
                let before = c.len();
                c = c.trim_start_matches(|ch: char| {
                    ch.is_ascii_digit() || matches!(ch, ',' | '$' | '~' | '!' | '+' | ' ' | '\t')
                });
                if let Some(rest) = c.strip_prefix('/') {
                    // A regex address `/re/`; a `\/` inside it is rare enough to refuse.
                    if rest.contains('\\') {
                        return false;
                    }
                    match rest.split_once('/') {
                        Some((_, after)) => c = after,
                        None => return false,
                    }
                }
                if c.len() == before {
                    break;
                }
            }
            let c = c.trim_end();
            matches!(c, "p" | "P" | "=" | "l" | "n" | "N" | "d" | "D" | "")
                || c.strip_prefix(['q', 'Q'])
                    .is_some_and(|n| n.trim().bytes().all(|b| b.is_ascii_digit()))
        })
}

/// The signature's spelling of a program name that is one program under several names
/// (`python3`, `python3.12` are `python`): the name that runs the same thing.
pub(crate) fn program_family(program: &str) -> &str {
    match program.strip_prefix("python3") {
        Some(rest)
            if rest.is_empty()
                || (rest.starts_with('.')
                    && rest.len() > 1
                    && rest.bytes().skip(1).all(|b| b.is_ascii_digit())) =>
        {
            "python"
        }
        _ => program,
    }
}

/// A `git -c` key that changes only how git shows its output (colours, quoting of paths,
/// advice, columns): dropped from the signature. Every other key stays, because keys such as
/// `core.pager`, `core.fsmonitor`, `diff.external` or `alias.*` run programs.
pub(crate) fn display_config_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    (key.starts_with("color.") && !key.contains("cmd"))
        || key.starts_with("advice.")
        || key.starts_with("column.")
        || key == "core.quotepath"
}

/// Programs whose options are single-dash words (`find -fls`, `gdb -ex`, `emacs -eval`): a word
/// such as `-fls` is one option there, never a cluster of `-f -l -s`.
pub(crate) fn single_dash_words(program: &str) -> bool {
    matches!(
        program,
        "find"
            | "gdb"
            | "emacs"
            | "java"
            | "javac"
            | "go"
            | "openssl"
            | "ffmpeg"
            | "ffprobe"
            | "sqlite3"
            | "xterm"
            | "xmllint"
            | "gcc"
            | "g++"
            | "cc"
            | "c++"
            | "clang"
            | "clang++"
            | "terraform"
            | "tofu"
            | "xcodebuild"
            | "qemu-system-x86_64"
            | "lldb"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts_that_only_print() {
        for script in [
            "5,10p", "1,20p", "/TODO/p", "$p", "10q", "=", "1~2p", "/a/,/b/p", "3,$ p",
        ] {
            assert!(sed_prints_only(script), "{script}");
        }
        for script in [
            "w out",
            "1w x",
            "e id",
            "s/a/b/",
            "r /etc/passwd",
            "1{p}",
            "",
            "/x/w y",
            "s/a/b/w f",
            "R x",
            "/a\\/b/p",
        ] {
            assert!(!sed_prints_only(script), "{script}");
        }
    }

    #[test]
    fn python_names() {
        assert_eq!(program_family("python3"), "python");
        assert_eq!(program_family("python3.12"), "python");
        assert_eq!(program_family("python3x"), "python3x");
        assert_eq!(program_family("python3."), "python3.");
    }

    #[test]
    fn only_display_keys_are_dropped() {
        assert!(display_config_key("color.ui"));
        assert!(display_config_key("core.quotePath"));
        assert!(!display_config_key("core.pager"));
        assert!(!display_config_key("alias.st"));
        assert!(!display_config_key("core.fsmonitor"));
    }
}
