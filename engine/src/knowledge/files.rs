//! Files and text: readers, searchers, printers, writers, deleters, archivers, and the shell's
//! own harmless builtins.
//!
//! The special cases are the tools that look read-only and are not: `sed -i`, `sort -o`,
//! `tee`, `dd of=`, `find -delete`, `tar -x`, and recursive searches of credential trees.

use super::classification::{Classification, Invocation, Judge};
use crate::model::{Access, Capability as C, Reach, Reversibility, Scale};
use crate::shell::lex::Word;
use crate::static_index::{Names, flags};

pub(super) const TABLE: &[(&[&str], Judge)] = &[
    (
        &[
            "cat",
            "head",
            "tail",
            "less",
            "more",
            "bat",
            "batcat",
            "wc",
            "file",
            "stat",
            "md5sum",
            "sha1sum",
            "sha256sum",
            "sha512sum",
            "cksum",
            "b2sum",
            "od",
            "xxd",
            "hexdump",
            "strings",
            "nl",
            "tac",
            "cut",
            "uniq",
            "column",
            "paste",
            "readlink",
            "realpath",
            "fold",
            "fmt",
            "expand",
            "unexpand",
            "rev",
            "iconv",
            "base64",
            "base32",
            "zcat",
            "zless",
            "bzcat",
            "xzcat",
            "type",
            "look",
            "join",
            "csvlook",
            "mdcat",
            "glow",
            "pr",
            "numfmt",
        ],
        reader,
    ),
    (
        &[
            "diff",
            "cmp",
            "comm",
            "colordiff",
            "difft",
            "delta",
            "sdiff",
        ],
        reader,
    ),
    (&["sort"], sort),
    (
        &["ls", "tree", "du", "exa", "eza", "lsd", "dir", "vdir"],
        lister,
    ),
    (
        &[
            "grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "git-grep", "ugrep",
        ],
        searcher,
    ),
    (&["fd", "fdfind", "locate", "mlocate", "plocate"], finder),
    (&["find"], find),
    (
        &[
            "echo",
            "true",
            "false",
            "pwd",
            "which",
            "whereis",
            "whoami",
            "date",
            "uname",
            "hostname",
            "id",
            "groups",
            "test",
            "[",
            "[[",
            "sleep",
            "seq",
            "yes",
            "clear",
            "cd",
            "pushd",
            "popd",
            "dirs",
            "basename",
            "dirname",
            "tty",
            "arch",
            "nproc",
            // `uptime` and `jobs` are process inspection (runtime).
            "cal",
            "expr",
            "bc",
            "factor",
            "wait",
            "shift",
            "unset",
            "shopt",
            "getopts",
            "let",
            "return",
            "exit",
            "break",
            "continue",
            ":",
            "tput",
            "stty",
            "command",
            "unalias",
            "history",
            "help",
            "man",
            "info",
            "tldr",
            "apropos",
            "whatis",
            "locale",
            "df",
            "free",
            "lscpu",
            "lsblk",
            "vmstat",
            "iostat",
            "getconf",
            "mktemp",
            "tr",
            "awk-version",
        ],
        inspect,
    ),
    (
        &[
            "export", "declare", "typeset", "local", "readonly", "set", "read", "printf", "alias",
            "hash",
        ],
        shell_state,
    ),
    (&["env", "printenv", "set-env"], print_env),
    (&["touch", "mkdir", "mkfifo"], writer_all),
    (&["tee"], tee),
    (&["truncate"], truncate),
    (&["shred"], shred),
    (&["cp", "install", "ditto"], copy),
    (&["mv", "rename"], move_files),
    (&["ln", "link"], link),
    (
        &["rm", "rmdir", "unlink", "trash", "trash-put", "gio-trash"],
        delete,
    ),
    (
        &["chmod", "chown", "chgrp", "chattr", "setfacl", "xattr"],
        permissions,
    ),
    (&["sed", "gsed"], sed),
    (&["perl-rename"], move_files),
    (&["dd"], dd),
    (&["tar", "bsdtar", "gtar"], tar),
    (&["zip", "7z", "7za", "rar"], zip),
    (
        &[
            "unzip",
            "unrar",
            "gunzip",
            "bunzip2",
            "unxz",
            "uncompress",
            "unzstd",
        ],
        extract,
    ),
    (&["gzip", "bzip2", "xz", "zstd", "lz4", "brotli"], compress),
    (&["jq", "yq", "gojq", "jaq"], json_query),
    (&["patch"], patch),
    (&["split", "csplit"], split),
    (
        &[
            "vim", "vi", "nvim", "nano", "emacs", "code", "subl", "ed", "ex", "pico", "micro",
            "view", "vimdiff", "dc",
        ],
        editor,
    ),
    (&["open", "xdg-open", "start"], open),
];

fn reader(inv: &Invocation<'_>) -> Classification {
    if matches!(inv.program, "less" | "more")
        && let Some(j) = pager(inv)
    {
        return j;
    }
    // Options that take a value, per program: `cat -n .env` reads `.env`.
    let valued: Names<'_> = match inv.program {
        "head" | "tail" => flags![
            "-n",
            "-c",
            "--lines",
            "--bytes",
            "-s",
            "--sleep-interval",
            "--pid",
        ],
        "cut" => flags![
            "-d",
            "-f",
            "-c",
            "-b",
            "--delimiter",
            "--fields",
            "--characters",
            "--bytes",
            "--output-delimiter",
        ],
        "fold" | "fmt" => flags!["-w", "--width", "-p", "--prefix"],
        "nl" => flags!["-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"],
        "uniq" => flags![
            "-f",
            "-s",
            "-w",
            "--skip-fields",
            "--skip-chars",
            "--check-chars",
        ],
        "column" => flags!["-s", "-c", "-o", "-t", "--separator", "--output-separator"],
        "od" | "hexdump" | "xxd" => flags![
            "-n", "-s", "-j", "-N", "-t", "-A", "-w", "-c", "-l", "-o", "-e", "-f", "-g",
        ],
        "strings" => flags!["-n", "-t", "-e", "--bytes", "--radix", "--encoding"],
        "join" => flags!["-1", "-2", "-j", "-t", "-e", "-o"],
        "paste" => flags!["-d", "--delimiters"],
        "pr" => flags!["-h", "-l", "-w", "-o", "-N", "-s"],
        "iconv" => flags!["-f", "-t", "--from-code", "--to-code", "-o", "--output"],
        "base64" | "base32" => flags!["-w", "--wrap"],
        "expand" | "unexpand" => flags!["-t", "--tabs"],
        _ => flags![],
    };
    let mut positionals = inv.positionals(valued);
    // Readers that can also write: an output option or a second operand.
    let output = match inv.program {
        "uniq" | "xxd" if positionals.len() >= 2 => positionals.pop().cloned(),
        "iconv" => inv.any_value(flags!["-o", "--output"]),
        _ => None,
    };
    if let Some(out) = output {
        let mut j = Classification::new(C::FsWriteWorkspace).with_paths(positionals, Access::Read);
        j.targets.push((out, Access::Write));
        return j;
    }
    if inv.program == "base64" && inv.has_any(flags!["-o", "--output"]) {
        return Classification::new(C::FsWriteWorkspace)
            .with_paths(inv.value(flags!["-o", "--output"]), Access::Write);
    }
    Classification::new(C::FsReadWorkspace).with_paths(positionals, Access::Read)
}

fn sort(inv: &Invocation<'_>) -> Classification {
    let valued = flags![
        "-k",
        "-t",
        "-o",
        "--output",
        "-S",
        "-T",
        "--key",
        "--field-separator",
    ];
    let j =
        Classification::new(C::FsReadWorkspace).with_paths(inv.positionals(valued), Access::Read);
    match inv.any_value(flags!["-o", "--output"]) {
        Some(out) => {
            let mut j = j;
            j.capability = C::FsWriteWorkspace;
            j.blast = C::FsWriteWorkspace.default_blast();
            j.targets.push((out, Access::Write));
            j
        }
        None => j,
    }
}

fn lister(inv: &Invocation<'_>) -> Classification {
    // `-L` is tree's depth and a boolean of `ls` and `du` (follow links); `-d` du's depth and
    // a boolean of `ls`.
    let valued = match inv.program {
        "tree" => flags!["-I", "-L", "-P", "-o", "--filelimit", "-H", "-T"],
        "du" => flags!["-d", "--max-depth", "-B", "-t", "-X", "--exclude"],
        // `-T` is their tree (a boolean), `-L` its depth.
        "eza" | "exa" => flags![
            "-L",
            "--level",
            "-I",
            "--ignore-glob",
            "-w",
            "--width",
            "-s",
            "--sort",
            "-t",
            "--time"
        ],
        "lsd" => flags!["--depth", "-I", "--ignore-glob"],
        _ => flags![
            "-I",
            "--ignore",
            "--hide",
            "-T",
            "-w",
            "--tabsize",
            "--width"
        ],
    };
    if inv.program == "tree"
        && let Some(out) = inv.any_value(flags!["-o"])
    {
        // `tree -o FILE` writes its listing.
        return Classification::new(C::FsWriteWorkspace)
            .with_paths(inv.positionals(valued), Access::Read)
            .with_paths([&out], Access::Write);
    }
    let recursive = inv.has_any(flags!["-R", "--recursive"])
        || inv.program == "tree"
        || inv.program == "du"
        || matches!(inv.program, "eza" | "exa") && inv.has_any(flags!["--recurse", "-T", "--tree"])
        || inv.program == "lsd" && inv.has_any(flags!["--tree"]);
    // Into the directories links lead to: `ls -RL`, `du -L`, `tree -l`. eza and lsd list a
    // linked directory as a link; told to dereference (eza's `-X`, lsd's `-L`) they see a
    // directory there, and are taken to walk into it.
    let follows = match inv.program {
        "tree" => inv.has_any(flags!["-l"]),
        "du" => inv.has_any(flags!["-L", "--dereference"]),
        "ls" | "dir" | "vdir" | "lsd" => recursive && inv.has_any(flags!["-L", "--dereference"]),
        "eza" | "exa" => recursive && inv.has_any(flags!["-X", "--dereference"]),
        _ => false,
    };
    let positionals = inv.positionals(valued);
    let mut j = Classification::new(C::FsReadWorkspace)
        .recursive(recursive)
        .following_links(follows);
    if positionals.is_empty() {
        if follows {
            // With no path it walks the working directory.
            j.targets
                .push((crate::shell::lex::Word::plain("."), Access::Read));
        }
        return j;
    }
    j.with_paths(positionals, Access::Read)
}

fn searcher(inv: &Invocation<'_>) -> Classification {
    if inv.has_any(flags!["--pre", "--pre-glob"])
        || inv.args.iter().any(|w| w.text.starts_with("--pre="))
    {
        // ripgrep runs the `--pre` program on every file.
        return Classification::opaque(C::ExecUnknown, "runs a preprocessor program on every file");
    }
    let valued = flags![
        "-e",
        "-f",
        "-A",
        "-B",
        "-C",
        "-m",
        "-g",
        "--glob",
        "-t",
        "--type",
        "-T",
        "--type-not",
        "--max-count",
        "--context",
        "--regexp",
        "--file",
        "--include",
        "--exclude",
        "--exclude-dir",
        "-d",
        "--max-depth",
        "-j",
        "--threads",
        "-M",
        "--max-columns",
        "-E",
        "--encoding",
        "--color",
        "--colors",
        "-r",
        "--replace",
    ];
    // grep's -r takes no value; ripgrep's -r is --replace.
    let rg = inv.program == "rg";
    let mut positionals = inv.positionals_where(|t| {
        valued.contains(t) && (rg || !matches!(t, "-r" | "-E" | "-t" | "-T"))
    });
    let pattern_given = inv.has_any(flags!["-e", "--regexp", "-f", "--file"]);
    // The first operand is the pattern unless `-e`/`-f` gave one; `-e` values are patterns too.
    // A pattern is matched against lines, never opened: `grep .env notes.txt` reads notes.txt.
    let mut patterns: Vec<&crate::shell::lex::Word> = Vec::new();
    if !pattern_given && !positionals.is_empty() {
        patterns.push(positionals.remove(0));
    }
    let mut words = inv.args.iter();
    while let Some(word) = words.next() {
        if matches!(word.text.as_str(), "-e" | "--regexp")
            && let Some(value) = words.next()
        {
            patterns.push(value);
        }
    }
    let recursive = matches!(inv.program, "rg" | "ag" | "ack" | "ugrep")
        || inv.has_any(flags!["-r", "-R", "--recursive", "--dereference-recursive"]);
    // ripgrep and ag follow links with -L/--follow (ag -f), ack with --follow, grep and ugrep
    // with -R (ugrep's -S follows links to files).
    let follows = match inv.program {
        "rg" => inv.has_any(flags!["-L", "--follow"]),
        "ag" => inv.has_any(flags!["-f", "--follow"]),
        "ack" => inv.has_any(flags!["--follow"]),
        "ugrep" => inv.has_any(flags![
            "-R",
            "--dereference-recursive",
            "-S",
            "--dereference-files"
        ]),
        _ => inv.has_any(flags!["-R", "--dereference-recursive"]),
    };
    let mut j = Classification::new(C::FsReadWorkspace)
        .recursive(recursive)
        .following_links(follows)
        .with_patterns(inv, patterns);
    if let Some(file) = inv.any_value(flags!["-f", "--file"]) {
        j.targets.push((file, Access::Read));
    }
    if recursive && positionals.is_empty() {
        // A recursive search with no path searches the working directory.
        j.targets
            .push((crate::shell::lex::Word::plain("."), Access::Read));
    }
    j.with_paths(positionals, Access::Read)
}

fn finder(inv: &Invocation<'_>) -> Classification {
    let valued = flags![
        "-e",
        "--extension",
        "-t",
        "--type",
        "-d",
        "--max-depth",
        "-E",
        "--exclude",
        "-x",
        "-X",
        "--exec",
        "--exec-batch",
    ];
    if inv.has_any(flags!["-x", "--exec", "-X", "--exec-batch"]) {
        return Classification::opaque(C::ExecUnknown, "fd runs a command on every match");
    }
    let positionals = inv.positionals(valued);
    let follows = inv.has_any(flags!["-L", "--follow"]);
    let mut j = Classification::new(C::FsReadWorkspace)
        .recursive(true)
        .following_links(follows);
    let roots = positionals.get(1..).unwrap_or(&[]);
    if follows && roots.is_empty() {
        // With no path it walks the working directory.
        j.targets
            .push((crate::shell::lex::Word::plain("."), Access::Read));
    }
    j.with_paths(roots.iter().copied(), Access::Read)
}

fn find(inv: &Invocation<'_>) -> Classification {
    let owned_roots = crate::shell::unwrap::find_roots(inv.args);
    let roots: Vec<&crate::shell::lex::Word> = owned_roots.iter().collect();
    let mut j = if inv.has("-delete") {
        Classification::new(C::FsDelete)
            .scale(Scale::Many)
            .with_paths(roots.iter().copied(), Access::Delete)
    } else {
        Classification::new(C::FsReadWorkspace).with_paths(roots.iter().copied(), Access::Read)
    };
    j = j.recursive(true).following_links(
        inv.args
            .iter()
            .any(|w| matches!(w.text.as_str(), "-L" | "-follow")),
    );
    // A name pattern selects which names find prints (`-name .env` lists, it does not read).
    // When find acts on what it matches (runs a command, deletes, writes a list), the pattern
    // decides what is acted on, so it stays typed like a path there.
    let acts = inv.args.iter().any(|w| {
        matches!(
            w.text.as_str(),
            "-exec"
                | "-execdir"
                | "-ok"
                | "-okdir"
                | "-delete"
                | "-fprint"
                | "-fprint0"
                | "-fprintf"
                | "-fls"
        )
    });
    if !acts {
        let mut names = Vec::new();
        let mut words = inv.args.iter();
        while let Some(word) = words.next() {
            if matches!(
                word.text.as_str(),
                "-name"
                    | "-iname"
                    | "-path"
                    | "-ipath"
                    | "-wholename"
                    | "-iwholename"
                    | "-regex"
                    | "-iregex"
                    | "-lname"
                    | "-ilname"
            ) && let Some(value) = words.next()
            {
                names.push(value);
            }
        }
        j = j.with_patterns(inv, names);
    }
    if roots.is_empty() {
        j.targets
            .push((crate::shell::lex::Word::plain("."), Access::Read));
    }
    for flag in ["-fprint", "-fprint0", "-fprintf", "-fls"] {
        if let Some(out) = inv.value_of(flag) {
            j.targets.push((out.clone(), Access::Write));
            j.capability = C::FsWriteWorkspace;
        }
    }
    j
}

fn inspect(inv: &Invocation<'_>) -> Classification {
    // `man -P CMD`, `-H CMD` (a browser) and `--pager=CMD` run a program of the caller's choice.
    if inv.program == "man"
        && inv.args.iter().any(|w| {
            let t = w.text.as_str();
            t.starts_with("-P")
                || t.starts_with("-H")
                || t.starts_with("--pager")
                || t.starts_with("--html")
                || t.starts_with("--preprocessor")
                || t.starts_with("-p")
        })
    {
        return Classification::unread(C::ExecUnknown, "`man` is told which program to run");
    }
    Classification::new(C::ExecInspect).reach(Reach::None)
}

/// `less`/`more`: a log file option writes its value; an initial command (`+!cmd`, `+|cmd`,
/// `-p` is a search and harmless) can run programs. `None` when it is a plain read.
fn pager(inv: &Invocation<'_>) -> Option<Classification> {
    let runs = inv.args.iter().any(|w| {
        let t = w.text.as_str();
        let command = t.strip_prefix("++").or_else(|| t.strip_prefix('+'));
        command.is_some_and(|c| {
            !(c.is_empty()
                || c.starts_with('/')
                || c.starts_with('?')
                || matches!(c, "G" | "g" | "F")
                || c.bytes().all(|b| b.is_ascii_digit()))
        })
    });
    if runs {
        return Some(Classification::unread(
            C::ExecUnknown,
            "an initial pager command, which can run programs or write files",
        ));
    }
    let log = inv
        .any_value(flags!["-o", "-O", "--log-file", "--LOG-FILE"])
        .filter(|w| !w.text.is_empty());
    let log = log?;
    let files = inv.positionals(flags![
        "-o",
        "-O",
        "--log-file",
        "--LOG-FILE",
        "-p",
        "-x",
        "-b",
        "-h",
        "-j",
        "-y",
        "-z",
        "-P",
        "-t",
        "-T",
        "-k"
    ]);
    let mut j = Classification::new(C::FsWriteWorkspace).with_paths(files, Access::Read);
    j.targets.push((log, Access::Write));
    Some(j)
}

/// Builtins that change the shell's own state: names they set can hijack later commands,
/// aliases and hashed paths replace programs, and listing the state prints the environment.
fn shell_state(inv: &Invocation<'_>) -> Classification {
    let words: Vec<&str> = inv.args.iter().map(|w| w.text.as_str()).collect();
    let names: Vec<&str> = match inv.program {
        // `read NAME…`, `printf -v NAME`, `export/declare NAME=…`.
        "read" => inv
            .positionals(flags!["-d", "-n", "-N", "-p", "-t", "-u", "-a"])
            .iter()
            .map(|w| w.text.as_str())
            .collect(),
        "printf" => inv
            .value(flags!["-v"])
            .map(|w| vec![w.text.as_str()])
            .unwrap_or_default(),
        _ => words
            .iter()
            .filter_map(|w| w.split_once('=').map(|(n, _)| n).or(Some(*w)))
            .collect(),
    };
    if let Some(name) = names
        .iter()
        .find(|n| crate::shell::unwrap::is_hijack(n.trim_start_matches('-')))
    {
        return Classification::opaque(
            C::ExecUnknown,
            &format!(
                "`{}` sets `{name}`, which changes what later commands run",
                inv.program
            ),
        );
    }
    if words.iter().any(|w| w.contains("$(") || w.contains('`')) && inv.program != "printf" {
        return Classification::opaque(
            C::ExecUnknown,
            "a value that holds code, which runs if it is evaluated later",
        );
    }
    match inv.program {
        "alias" if words.iter().any(|w| w.contains('=')) => Classification::opaque(
            C::ExecUnknown,
            "an alias changes what a later command name runs",
        ),
        "hash" if words.contains(&"-p") => Classification::opaque(
            C::ExecUnknown,
            "`hash -p` changes which file a later command name runs",
        ),
        // Listing the state prints the environment, which routinely holds tokens.
        "export" | "declare" | "typeset" | "readonly"
            if words.is_empty() || words.contains(&"-p") =>
        {
            Classification::new(C::SecretRead)
        }
        "set" if words.is_empty() => Classification::new(C::SecretRead),
        "printf" | "read" => Classification::new(C::ExecInspect).reach(Reach::None),
        _ => Classification::new(C::Meta),
    }
}

/// jq, yq and their ports: the first operand is an expression, matched against the input and
/// never opened (`jq '.scripts.env' package.json` reads no `.env`); the other operands are read,
/// and rewritten by yq's `-i`. `--rawfile`/`--slurpfile NAME FILE` and `-L DIR` read what they
/// name; `--arg`/`--argjson NAME VALUE` take two words; after `--args`/`--jsonargs` operands are
/// values, not files. An expression from a file (`-f`) or one that loads files is not
/// understood; one that reads the environment is a secret read.
fn json_query(inv: &Invocation<'_>) -> Classification {
    let mut reads: Vec<&Word> = Vec::new();
    let mut operands: Vec<&Word> = Vec::new();
    // Strings handed to the expression: never opened.
    let mut strings: Vec<&Word> = Vec::new();
    let mut words = inv.args.iter();
    let (mut options, mut values) = (true, false);
    while let Some(word) = words.next() {
        let text = word.text.as_str();
        if !options || !text.starts_with('-') || text == "-" {
            if !values || operands.is_empty() {
                operands.push(word);
            } else {
                strings.push(word);
            }
            continue;
        }
        match text {
            "--" => options = false,
            "--args" | "--jsonargs" => values = true,
            "--arg" | "--argjson" => {
                words.next();
                strings.extend(words.next());
            }
            "--rawfile" | "--slurpfile" => {
                words.next();
                reads.extend(words.next());
            }
            "-L" | "--library-path" => reads.extend(words.next()),
            // `-f FILE`, also inside a cluster (`-rf FILE`): the expression, which can read the
            // environment (`$ENV`, `env`) and load modules, is code the engine has not read.
            _ if text == "--from-file"
                || !text.starts_with("--")
                    && text.len() > 1
                    && text.starts_with('-')
                    && !text.starts_with("-L")
                    && text.bytes().skip(1).all(|b| b.is_ascii_alphabetic())
                    && text.contains('f') =>
            {
                return Classification::unread(
                    C::FsReadWorkspace,
                    "the expression is read from a file the engine has not read",
                );
            }
            "--indent" | "-o" | "--output-format" | "-p" | "--input-format" | "-I" => {
                words.next();
            }
            _ if text.starts_with("-L") && text.len() > 2 => {
                reads.push(word);
            }
            _ => {}
        }
    }
    if inv.program == "yq" && inv.has_any(flags!["-s", "--split-exp"]) {
        return Classification::opaque(
            C::FsWriteWorkspace,
            "writes one file per document, named by an expression",
        );
    }
    // yq v4's subcommands come before the expression.
    let operands = match operands.split_first() {
        Some((sub, rest))
            if inv.program == "yq"
                && matches!(sub.text.as_str(), "e" | "eval" | "ea" | "eval-all") =>
        {
            rest
        }
        _ => &operands[..],
    };
    let (expression, files) = match operands.split_first() {
        Some((expression, files)) => (Some(*expression), files),
        None => (None, &[][..]),
    };
    let in_place = inv.program == "yq" && inv.has_any(flags!["-i", "--inplace"]);
    let reach = expression.and_then(|e| expression_reach(&e.text));
    let judged = match (reach, in_place) {
        (Some(_), true) => Classification::opaque(
            C::FsWriteWorkspace,
            "an in-place edit whose expression reads the environment or loads files",
        )
        .with_paths(files.iter().copied(), Access::Write),
        (Some(j), false) => j.with_paths(files.iter().copied(), Access::Read),
        (None, true) => Classification::new(C::FsWriteWorkspace)
            .with_paths(files.iter().copied(), Access::Write),
        (None, false) => {
            Classification::new(C::FsReadWorkspace).with_paths(files.iter().copied(), Access::Read)
        }
    };
    judged
        .with_paths(reads, Access::Read)
        .with_patterns(inv, expression.into_iter().chain(strings))
}

/// What a jq or yq expression reaches beyond its input: the environment (jq's `env` and
/// `$ENV`, yq's `env(…)`, `strenv(…)` and `envsubst`), which routinely holds tokens, and files
/// it loads (yq's `load`, `load_str`, `load_xml`, …): a file named by a plain string literal is
/// a read of that file; any other argument is not understood. A name counts only as a whole
/// identifier: `.env` and `.payload` are fields. `None`: it reaches nothing beyond its input.
fn expression_reach(expression: &str) -> Option<Classification> {
    let bytes = expression.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let starts_name = |at: usize| {
        !at.checked_sub(1)
            .and_then(|i| bytes.get(i))
            .is_some_and(|b| is_name(*b) || *b == b'.')
    };
    let names = |name: &'static str| expression.match_indices(name).map(|(at, _)| at);
    let environment = names("env")
        .any(|at| starts_name(at) && !bytes.get(at + 3).is_some_and(|b| is_name(*b)))
        || names("ENV").any(|at| {
            at.checked_sub(1).and_then(|i| bytes.get(i)) == Some(&b'$')
                && !bytes.get(at + 3).is_some_and(|b| is_name(*b))
        })
        || expression.contains("strenv")
        || expression.contains("envsubst");
    let mut loaded: Vec<(Word, Access)> = Vec::new();
    for at in names("load").filter(|at| starts_name(*at)) {
        let rest = expression.get(at + 4..).unwrap_or_default();
        let Some(call) = rest
            .trim_start_matches(|c: char| c == '_' || c.is_ascii_alphanumeric())
            .strip_prefix('(')
        else {
            continue;
        };
        // A plain literal: `"…"` without escapes or interpolation, then `)`.
        let literal = call
            .trim_start()
            .strip_prefix('"')
            .and_then(|s| s.split_once('"'))
            .filter(|(path, after)| !path.contains('\\') && after.trim_start().starts_with(')'));
        match literal {
            Some((path, _)) => loaded.push((Word::plain(path), Access::Read)),
            None => {
                return Some(Classification::opaque(
                    C::FsReadWorkspace,
                    "the expression loads a file it computes",
                ));
            }
        }
    }
    if !environment && loaded.is_empty() {
        return None;
    }
    let mut j = Classification::new(if environment {
        C::SecretRead
    } else {
        C::FsReadWorkspace
    });
    j.targets.extend(loaded);
    Some(j)
}

fn print_env(_inv: &Invocation<'_>) -> Classification {
    // The environment routinely holds tokens.
    Classification::new(C::SecretRead)
}

fn writer_all(inv: &Invocation<'_>) -> Classification {
    let valued = flags!["-m", "--mode", "-t", "-d", "-r", "--reference"];
    Classification::new(C::FsWriteWorkspace).with_paths(inv.positionals(valued), Access::Write)
}

fn tee(inv: &Invocation<'_>) -> Classification {
    Classification::new(C::FsWriteWorkspace).with_paths(inv.positionals(flags![]), Access::Write)
}

fn truncate(inv: &Invocation<'_>) -> Classification {
    let valued = flags!["-s", "--size", "-r", "--reference", "-n", "--iterations"];
    Classification::new(C::FsWriteWorkspace)
        .reversibility(Reversibility::Hard)
        .with_paths(inv.positionals(valued), Access::Write)
}

fn shred(inv: &Invocation<'_>) -> Classification {
    let valued = flags!["-n", "--iterations", "-s", "--size", "--random-source"];
    let capability = if inv.has_any(flags!["-u", "--remove"]) {
        C::FsDelete
    } else {
        C::FsWriteWorkspace
    };
    let access = if capability == C::FsDelete {
        Access::Delete
    } else {
        Access::Write
    };
    Classification::new(capability)
        .reversibility(Reversibility::Irreversible)
        .with_paths(inv.positionals(valued), access)
}

fn copy(inv: &Invocation<'_>) -> Classification {
    let valued = flags![
        "-t",
        "--target-directory",
        "-S",
        "--suffix",
        "-m",
        "--mode",
        "-o",
        "-g",
        "--owner",
        "--group",
    ];
    let positionals = inv.positionals(valued);
    let recursive = inv.has_any(flags!["-r", "-R", "-a", "--recursive", "--archive"]);
    // A recursive copy copies links as links unless told to follow them (`-L`, GNU and BSD);
    // `-H` follows only the links it is given, which are placed where they lead anyway.
    let follows = recursive && inv.has_any(flags!["-L", "--dereference"]);
    // cp opens an existing destination file through its link: a recursive copy writes through
    // the file links below its destination, a copy into a directory through the link of the
    // name it copies (`install` replaces the file instead).
    let cp = inv.program != "install";
    let mut j = Classification::new(C::FsWriteWorkspace)
        .recursive(recursive)
        .following_links(follows)
        .writing_through_links(cp && recursive);
    // `-T`: the destination is the copy itself, not a directory it lands in.
    j.copies_into = cp && !inv.has_any(flags!["-T", "--no-target-directory"]);
    let target = inv.any_value(flags!["-t", "--target-directory"]);
    let (sources, dest) = match (&target, positionals.split_last()) {
        (Some(_), _) => (positionals.as_slice(), None),
        (None, Some((last, rest))) => (rest, Some(*last)),
        (None, None) => (positionals.as_slice(), None),
    };
    j = j.with_paths(sources.iter().copied(), Access::Read);
    if let Some(dest) = target.as_ref().or(dest) {
        j.targets.push((dest.clone(), Access::Write));
    }
    j
}

fn move_files(inv: &Invocation<'_>) -> Classification {
    let valued = flags!["-t", "--target-directory", "-S", "--suffix"];
    let positionals = inv.positionals(valued);
    // `mv` moves a directory with everything in it.
    let mut j = Classification::new(C::FsWriteWorkspace).recursive(true);
    let target = inv.any_value(flags!["-t", "--target-directory"]);
    let (sources, dest) = match (&target, positionals.split_last()) {
        (Some(_), _) => (positionals.as_slice(), None),
        (None, Some((last, rest))) => (rest, Some(*last)),
        (None, None) => (positionals.as_slice(), None),
    };
    // Moving a file away removes it from where it was, and carries its contents elsewhere.
    j = j.with_paths(sources.iter().copied(), Access::Read);
    j = j.with_paths(sources.iter().copied(), Access::Delete);
    if let Some(dest) = target.as_ref().or(dest) {
        j.targets.push((dest.clone(), Access::Write));
    }
    j
}

fn link(inv: &Invocation<'_>) -> Classification {
    let positionals = inv.positionals(flags!["-t", "--target-directory", "-S"]);
    let mut j = Classification::new(C::FsWriteWorkspace);
    if let Some((link, targets)) = positionals.split_last() {
        // The link's target counts as written: a link into `/etc` lets later "workspace"
        // writes land there. A relative symlink target is relative to the link's directory.
        let symbolic = inv.has_any(flags!["-s", "--symbolic"]);
        let link_dir = link
            .text
            .rsplit_once('/')
            .map(|(dir, _)| dir)
            .unwrap_or(".");
        for target in targets {
            let mut word = (*target).clone();
            if symbolic && !word.text.starts_with(['/', '~']) && targets.len() == 1 {
                word.set_text(format!("{link_dir}/{}", word.text));
            }
            j.targets.push((word, Access::Write));
        }
        if !targets.is_empty() {
            j.targets.push(((*link).clone(), Access::Write));
        }
    }
    j
}

fn delete(inv: &Invocation<'_>) -> Classification {
    let recursive = inv.has_any(flags!["-r", "-R", "--recursive"]);
    let mut j = Classification::new(C::FsDelete).recursive(recursive);
    if recursive || inv.has_any(flags!["-f", "--force"]) {
        j = j.scale(Scale::Many);
    }
    j.with_paths(inv.positionals(flags![]), Access::Delete)
}

fn permissions(inv: &Invocation<'_>) -> Classification {
    let positionals = inv.positionals(flags!["--reference"]);
    let recursive = inv.has_any(flags!["-R", "--recursive"]);
    let paths: Vec<&Word> = if inv.program == "xattr" || inv.has("--reference") {
        positionals
    } else if inv.program == "chmod" {
        // `chmod -x f`, `chmod -w,u+r f`: a symbolic mode may start with `-`, and is then the
        // mode, not an option (chmod's own options use none of these letters).
        let dash_mode = |t: &str| {
            t.len() > 1
                && t.chars()
                    .skip(1)
                    .all(|c| "rwxXstugoa+-=,0123456789".contains(c))
        };
        let mut mode_seen = false;
        let mut rest_positional = false;
        let mut paths = Vec::new();
        for word in inv.args {
            let t = word.text.as_str();
            if !rest_positional && t == "--" {
                rest_positional = true;
            } else if !rest_positional && t.starts_with('-') && (mode_seen || !dash_mode(t)) {
                // an option
            } else if mode_seen {
                paths.push(word);
            } else {
                mode_seen = true;
            }
        }
        paths
    } else {
        positionals.get(1..).unwrap_or(&[]).to_vec()
    };
    // `-R -L` changes what every link below leads to (chown, chgrp, BSD and newer GNU chmod;
    // setfacl's `-L`/`--logical`); `-H` only the links given, placed where they lead anyway.
    let follows = recursive
        && matches!(inv.program, "chmod" | "chown" | "chgrp" | "setfacl")
        && inv.has_any(flags!["-L", "--logical"]);
    let mut j = Classification::new(C::FsWriteWorkspace)
        .recursive(recursive)
        .following_links(follows);
    if inv.program == "chown" || inv.program == "chgrp" {
        j = j.reversibility(Reversibility::Hard);
    }
    j.with_paths(paths, Access::Write)
}

fn sed(inv: &Invocation<'_>) -> Classification {
    let valued = flags![
        "-e",
        "-f",
        "--expression",
        "--file",
        "-l",
        "--line-length",
        "-s",
    ];
    let mut positionals = inv.positionals(valued);
    if inv.has_any(flags!["-f", "--file"]) || inv.attached_value(flags!["-f", "--file"]).is_some() {
        return Classification::opaque(
            C::ExecUnknown,
            "the sed program is in a file the engine has not read",
        );
    }
    // Every script: the first positional (without -e), each -e value, attached or not.
    let mut scripts: Vec<String> = Vec::new();
    let mut words = inv.args.iter().peekable();
    while let Some(word) = words.next() {
        let t = word.text.as_str();
        if t == "-e" || t == "--expression" {
            if let Some(next) = words.next() {
                scripts.push(next.text.to_string());
            }
        } else if let Some(v) = t
            .strip_prefix("--expression=")
            .or_else(|| t.strip_prefix("-e").filter(|v| !v.is_empty()))
        {
            scripts.push(v.to_string());
        }
    }
    if scripts.is_empty() && !positionals.is_empty() {
        scripts.push(positionals.remove(0).text.to_string());
    }
    if scripts.iter().any(|script| sed_script_escapes(script)) {
        return Classification::unread(
            C::ExecUnknown,
            "the sed program writes files or runs commands",
        )
        .with_paths(positionals, Access::Read);
    }
    let in_place = inv.has_any(flags!["-i", "--in-place"])
        || inv
            .args
            .iter()
            .any(|w| w.text.starts_with("-i") && !w.text.starts_with("--"));
    if in_place {
        // `-iSUFFIX` keeps a backup named by the suffix; one with a `/` puts it elsewhere
        // (`*` stands for the file's name).
        let backups: Vec<Word> = inv
            .args
            .iter()
            .filter_map(|w| {
                let suffix = w.text.strip_prefix("--in-place=").or_else(|| {
                    w.text
                        .strip_prefix("-i")
                        .filter(|_| !w.text.starts_with("--"))
                })?;
                suffix.contains('/').then_some(suffix)
            })
            .flat_map(|suffix| {
                positionals.iter().map(move |file| {
                    let name = file.text.rsplit('/').next().unwrap_or("");
                    let mut backup = (*file).clone();
                    // Without `*` the suffix is appended; GNU and BSD differ on where a
                    // suffix with a `/` lands, so the suffix as a path is placed too.
                    backup.set_text(if suffix.contains('*') {
                        suffix.replace('*', name)
                    } else {
                        suffix.to_string()
                    });
                    backup
                })
            })
            .collect();
        Classification::new(C::FsWriteWorkspace)
            .with_paths(positionals, Access::Write)
            .with_paths(&backups, Access::Write)
    } else {
        Classification::new(C::FsReadWorkspace).with_paths(positionals, Access::Read)
    }
}

/// A sed script with a command that writes a file (`w`, `W`, `s///w`) or runs one (`e`,
/// `s///e`), after any address (`12`, `$`, `/re/`, `1~2`, `!`) and spaces.
fn sed_script_escapes(script: &str) -> bool {
    script.split([';', '\n', '{', '}']).any(|cmd| {
        let mut c = cmd.trim_start();
        loop {
            let before = c.len();
            c = c.trim_start_matches(|ch: char| {
                ch.is_ascii_digit() || matches!(ch, ',' | '$' | '~' | '!' | ' ' | '\t')
            });
            if let Some(rest) = c.strip_prefix('/') {
                // A regex address `/re/`: skip to its closing slash.
                c = rest.split_once('/').map(|(_, after)| after).unwrap_or("");
            }
            if c.len() == before {
                break;
            }
        }
        c.starts_with('w') || c.starts_with('e') || c.starts_with('W') || {
            // `s/a/b/w file` and `s/a/b/e`
            c.starts_with('s') && c.len() > 1 && {
                let delim = c.chars().nth(1).unwrap_or('/');
                let flags = c.rsplit(delim).next().unwrap_or("");
                flags.contains('w') || flags.contains('e')
            }
        }
    })
}

fn dd(inv: &Invocation<'_>) -> Classification {
    let mut j = Classification::new(C::FsReadWorkspace);
    for word in inv.args {
        if let Some(path) = word.text.strip_prefix("if=") {
            let mut w = word.clone();
            w.set_text(path.to_string());
            j.targets.push((w, Access::Read));
        }
        if let Some(path) = word.text.strip_prefix("of=") {
            let mut w = word.clone();
            w.set_text(path.to_string());
            j.targets.push((w, Access::Write));
            j.capability = C::FsWriteWorkspace;
            j.blast = C::FsWriteWorkspace.default_blast();
            // Writing a raw device cannot be undone.
            j = j.reversibility(if path.starts_with("/dev/") {
                Reversibility::Irreversible
            } else {
                Reversibility::Hard
            });
        }
    }
    j
}

fn tar(inv: &Invocation<'_>) -> Classification {
    let first = inv.args.first().map(|w| w.text.as_str()).unwrap_or("");
    let bundled = !first.starts_with('-') && !first.is_empty();
    // `tar cIf prog …`, `-cI prog`: a bundled `I` names a compression program to run.
    let cluster_has_i = |w: &str| {
        let letters = w.strip_prefix('-').unwrap_or(w);
        !w.starts_with("--")
            && letters.chars().all(|c| c.is_ascii_alphabetic())
            && letters.contains('I')
    };
    if inv.args.iter().take(1).any(|w| cluster_has_i(&w.text))
        || inv
            .args
            .iter()
            .any(|w| w.text.starts_with('-') && cluster_has_i(&w.text))
    {
        return Classification::opaque(C::ExecUnknown, "tar runs another program");
    }
    let has = |letter: char, long: &str| {
        inv.has(&format!("-{letter}")) || inv.has(long) || (bundled && first.contains(letter))
    };
    if inv.has_any(flags![
        "--to-command",
        "--use-compress-program",
        "-I",
        "--checkpoint-action",
        "--info-script",
        "--new-volume-script",
        "-F",
    ]) {
        return Classification::opaque(C::ExecUnknown, "tar runs another program");
    }
    let valued = flags![
        "-f",
        "--file",
        "-C",
        "--directory",
        "-T",
        "--files-from",
        "-X",
        "--exclude-from",
        "--exclude",
        "-b",
        "-H",
        "--format",
    ];
    let mut positionals = inv.positionals(valued);
    if bundled && !positionals.is_empty() {
        positionals.remove(0);
    }
    // `-czf out.tgz`: a cluster ending in `f` takes the next word as the archive.
    let clustered_f = inv.args.iter().position(|w| {
        let t = w.text.as_str();
        t.len() > 2
            && t.starts_with('-')
            && !t.starts_with("--")
            && t.ends_with('f')
            && t.chars().skip(1).all(|c| c.is_ascii_alphabetic())
    });
    let clustered_archive = clustered_f.and_then(|at| inv.args.get(at + 1));
    if let Some(archive) = clustered_archive {
        positionals.retain(|w| !std::ptr::eq(*w, archive));
    }
    let archive = inv
        .any_value(flags!["-f", "--file"])
        .or_else(|| clustered_archive.cloned())
        .or_else(|| {
            if bundled && first.contains('f') {
                positionals.first().map(|w| (*w).clone())
            } else {
                None
            }
        });
    if bundled && first.contains('f') && !positionals.is_empty() {
        positionals.remove(0);
    }
    let dir = inv.any_value(flags!["-C", "--directory"]);
    if has('x', "--extract") || has('x', "--get") {
        // The archive decides which files change (and may hold `..` entries).
        let mut j = Classification::opaque(
            C::FsWriteWorkspace,
            "archive extraction writes whatever the archive holds",
        );
        // Members land below the directory through the links on their way (GNU tar replaces
        // a member's own link, not a linked directory above it): the links below it are
        // written through.
        j = j.scale(Scale::Many).writing_through_links(true);
        if let Some(a) = archive {
            j.targets.push((a, Access::Read));
        }
        j.targets
            .push((dir.unwrap_or_else(|| Word::plain(".")), Access::Write));
        return j;
    }
    if has('c', "--create") || has('r', "--append") || has('u', "--update") {
        // Members are named relative to `-C DIR`, which is read.
        let members: Vec<Word> = match &dir {
            Some(d) => positionals
                .iter()
                .map(|w| {
                    let mut joined = (*w).clone();
                    if !w.text.starts_with('/') && !w.text.starts_with('~') {
                        joined.set_text(format!("{}/{}", d.text.trim_end_matches('/'), w.text));
                    }
                    joined
                })
                .chain(std::iter::once(d.clone()))
                .collect(),
            None => positionals.into_iter().cloned().collect(),
        };
        // `-h`/`--dereference` archives what links lead to (bsdtar, macOS's tar, also `-L`).
        let follows = has('h', "--dereference") || has('L', "--dereference");
        let mut j = Classification::new(C::FsWriteWorkspace)
            .recursive(true)
            .following_links(follows)
            .with_paths(&members, Access::Read);
        if let Some(a) = archive {
            j.targets.push((a, Access::Write));
        }
        return j;
    }
    let mut j = Classification::new(C::FsReadWorkspace);
    if let Some(a) = archive {
        j.targets.push((a, Access::Read));
    }
    j
}

fn zip(inv: &Invocation<'_>) -> Classification {
    if inv.has_any(flags!["-TT", "--unzip-command"])
        || inv
            .args
            .iter()
            .any(|w| w.text.starts_with("-TT") || w.text.starts_with("--unzip-command="))
    {
        return Classification::opaque(C::ExecUnknown, "zip runs the test command it is given");
    }
    let positionals = inv.positionals(flags!["-x", "-i", "-P", "--password", "-o"]);
    if inv.program != "zip"
        && matches!(
            positionals.first().map(|w| w.text.as_str()),
            Some("x" | "e")
        )
    {
        return Classification::opaque(
            C::FsWriteWorkspace,
            "archive extraction writes whatever the archive holds",
        );
    }
    let recursive = inv.has_any(flags!["-r", "--recurse-paths", "-R"]) || inv.program != "zip";
    // zip stores what a link leads to unless told to store links (`-y`/`--symlinks`); so do
    // 7-Zip unless `-snl` and rar unless `-ol`.
    let stores_links = match inv.program {
        "zip" => inv.has_any(flags!["-y", "--symlinks"]),
        "rar" => inv
            .args
            .iter()
            .any(|w| matches!(w.text.as_str(), "-ol" | "-ola")),
        _ => inv.args.iter().any(|w| w.text == "-snl"),
    };
    let mut j = Classification::new(C::FsWriteWorkspace)
        .recursive(recursive)
        .following_links(recursive && !stores_links);
    let skip = usize::from(inv.program != "zip");
    let mut words = positionals.into_iter().skip(skip);
    if let Some(archive) = words.next() {
        j.targets.push((archive.clone(), Access::Write));
    }
    j.with_paths(words, Access::Read)
}

fn extract(inv: &Invocation<'_>) -> Classification {
    if inv.has_any(flags!["-l", "-t", "--list", "--test"]) {
        return Classification::new(C::FsReadWorkspace)
            .with_paths(inv.positionals(flags!["-d", "-x"]), Access::Read);
    }
    if matches!(
        inv.program,
        "gunzip" | "bunzip2" | "unxz" | "uncompress" | "unzstd"
    ) {
        return Classification::new(C::FsWriteWorkspace)
            .with_paths(inv.positionals(flags!["-S"]), Access::Write);
    }
    let mut j = Classification::opaque(
        C::FsWriteWorkspace,
        "archive extraction writes whatever the archive holds",
    )
    .scale(Scale::Many)
    .writing_through_links(true);
    j = j.with_paths(inv.positionals(flags!["-d", "-x", "-P"]), Access::Read);
    // Members land below `-d` (or the working directory) through the links on their way.
    let d = inv
        .any_value(flags!["-d"])
        .unwrap_or_else(|| Word::plain("."));
    j.targets.push((d, Access::Write));
    j
}

fn compress(inv: &Invocation<'_>) -> Classification {
    if inv.has_any(flags!["-c", "--stdout", "-l", "--list", "-t", "--test"]) {
        return Classification::new(C::FsReadWorkspace)
            .with_paths(inv.positionals(flags!["-S"]), Access::Read);
    }
    Classification::new(C::FsWriteWorkspace)
        .with_paths(inv.positionals(flags!["-S", "-o"]), Access::Write)
}

fn patch(inv: &Invocation<'_>) -> Classification {
    let mut j = if inv.has_any(flags!["--dry-run", "-C", "--check"]) {
        Classification::new(C::FsReadWorkspace)
    } else {
        Classification::opaque(C::FsWriteWorkspace, "the patch decides which files change")
    };
    // Where it writes is named by its options whatever the patch says: `-o FILE` receives the
    // result, `-d DIR` is where the patch's files are, `-r FILE` receives the rejects, `-B
    // PREFIX` the backups; `-i FILE` is the patch read.
    for flag in [
        flags!["-o", "--output"],
        flags!["-d", "--directory"],
        flags!["-r", "--reject-file"],
        flags!["-B", "--prefix"],
    ] {
        if let Some(value) = inv.any_value(flag) {
            j.targets.push((value, Access::Write));
        }
    }
    if let Some(value) = inv.any_value(flags!["-i", "--input"]) {
        j.targets.push((value, Access::Read));
    }
    j
}

fn split(inv: &Invocation<'_>) -> Classification {
    let positionals = inv.positionals(flags!["-l", "-b", "-n", "-a", "-C", "-f"]);
    let mut j = Classification::new(C::FsWriteWorkspace);
    if let Some(input) = positionals.first() {
        j.targets.push(((*input).clone(), Access::Read));
    }
    j
}

/// Names vim's netrw edits by running a transfer program (`scp://host/file`).
const REMOTE_EDIT: &[&str] = &[
    "scp://", "sftp://", "ftp://", "http://", "https://", "rsync://", "dav://", "davs://",
    "fetch://", "rcp://",
];

fn editor(inv: &Invocation<'_>) -> Classification {
    // Commands given on the command line (`vim -c '!id'`, `+cmd`, `--cmd`, `-S`, `-u`;
    // `emacs --eval`, `-l`, `--script`, `-f`) are code the engine has not read.
    let commands = inv.args.iter().any(|w| {
        let t = w.text.as_str();
        match inv.program {
            "emacs" => {
                [
                    "--eval",
                    "--load",
                    "--script",
                    "--funcall",
                    "--exec",
                    "-x",
                    "--file",
                    "--insert",
                    "--init-directory",
                ]
                .iter()
                .any(|f| {
                    t.strip_prefix(f)
                        .is_some_and(|r| r.is_empty() || r.starts_with('='))
                }) || matches!(t, "-l" | "-f" | "-L" | "--directory")
                    || t.starts_with("-l") && t.len() > 2
            }
            "vim" | "vi" | "nvim" | "view" | "vimdiff" | "ex" => {
                (t.starts_with('+') && t.len() > 1 && !t[1..].bytes().all(|b| b.is_ascii_digit()))
                    || matches!(
                        t,
                        "-c" | "--cmd"
                            | "-S"
                            | "-u"
                            | "-U"
                            | "-s"
                            | "-i"
                            | "-w"
                            | "-W"
                            | "--startuptime"
                    )
                    || t.starts_with("-c") && t.len() > 2
                    // `-V9FILE` writes its messages to FILE.
                    || t.strip_prefix("-V").is_some_and(|r| {
                        !r.trim_start_matches(|c: char| c.is_ascii_digit()).is_empty()
                    })
                    // A remote name is fetched and written by a program netrw runs.
                    || REMOTE_EDIT.iter().any(|scheme| t.starts_with(scheme))
            }
            // GNU ed reads `!command`'s output as its file: the operand is a program.
            "ed" | "red" => t.starts_with('!'),
            _ => false,
        }
    });
    if commands {
        return Classification::unread(
            C::FsWriteWorkspace,
            "commands given to the editor, which can run programs and write any file",
        )
        .with_paths(
            inv.positionals(flags![
                "-c",
                "--cmd",
                "-S",
                "-u",
                "-U",
                "-s",
                "-i",
                "-w",
                "-W",
                "-l",
                "-f",
                "-L",
                "--eval",
                "--load",
                "--script",
                "--funcall"
            ]),
            Access::Write,
        );
    }
    // An interactive editor; in an agent's shell it blocks or runs its own commands.
    Classification::opaque(
        C::FsWriteWorkspace,
        "an interactive editor can run anything",
    )
    .with_paths(inv.positionals(flags![]), Access::Write)
}

fn open(inv: &Invocation<'_>) -> Classification {
    Classification::opaque(
        C::ExecUnknown,
        "opens a file or URL with whatever program is registered",
    )
    .with_paths(inv.positionals(flags!["-a", "-b"]), Access::Read)
}
