//! The unwrapper: peels wrapper programs until the program that really runs is in front.
//!
//! `sudo -u x env FOO=1 timeout 5 nice -n 2 git status` is `git status` with the tags privilege,
//! env, timing; `sh -c '…'`, `eval`, `env -S` and `su -c` are parsed as shell text; `xargs` and
//! `find -exec` run a program whose arguments come from elsewhere; `source`, `trap`, a computed
//! program name, a login shell, or an assignment that changes which program runs (`PATH=`,
//! `LD_PRELOAD=`, `GIT_*`, …) make the command *opaque*: the engine does not know what runs.
//! A script's commands are flattened into their effective commands by [`super::script`], which
//! this module hands its peeling to.

use super::lex::{Redirect, Word};
use super::parse::{SimpleCommand, parse};
use super::script::{Effective, Wrapper, flatten, start_from};
use super::{MAX_DEPTH, UNRESOLVED};
use crate::static_index::{self, NameIndex, Names, PackedNames, flags, name_set, packed_names};

/// [`end_opaque`], and what runs is code the engine cannot read.
fn end_unread(
    mut current: Effective,
    program: String,
    args: Vec<Word>,
    why: &str,
    out: &mut Vec<Effective>,
) -> Step {
    current.unread = true;
    end_opaque(current, program, args, why, out)
}

/// Ends the peeling at `program`: it runs with `args`, and what it does is not knowable.
fn end_opaque(
    mut current: Effective,
    program: String,
    args: Vec<Word>,
    why: &str,
    out: &mut Vec<Effective>,
) -> Step {
    current.program = program;
    current.args = args;
    current.opaque(why);
    out.push(current);
    Step::Done
}

name_set! {
    /// Assignments that change which program runs or how it loads code.
    static HIJACK_NAMES = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "SHELL",
        "IFS",
        "PS4",
        "PROMPT_COMMAND",
        "CDPATH",
        "HOME",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "BROWSER",
        "SHELLOPTS",
        "BASHOPTS",
        "GLOBIGNORE",
        "HISTFILE",
        "KUBECONFIG",
        "DOCKER_HOST",
        "DOCKER_CONFIG",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "SSH_AUTH_SOCK",
        "GNUPGHOME",
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
        "CARGO_HOME",
        "RUSTC_WRAPPER",
        "RUSTC",
        "RUSTFLAGS",
        "CC",
        "CXX",
        "LESSOPEN",
        "LESSCLOSE",
        "MANPAGER",
        "SYSTEMD_PAGER",
        "TERMINAL",
        "COMPOSER_HOME",
        "GEM_HOME",
        "BUNDLE_GEMFILE",
        // The interpreter `uv run --active`, `poetry run` and activated shells take.
        "VIRTUAL_ENV",
        "MAKEFLAGS",
        // Startup files and helper programs the named tools read or run.
        "ZDOTDIR",
        "RUSTC_WORKSPACE_WRAPPER",
        "SUDO_ASKPASS",
        "SSH_ASKPASS",
        "PHPRC",
        "PHP_INI_SCAN_DIR",
        "CURL_HOME",
        "WGETRC",
        "VIMINIT",
        "EXINIT",
    ];
}

packed_names! {
    static HIJACK_PREFIXES = &[
        "GIT_",
        "LD_",
        "DYLD_",
        "PYTHON",
        "PERL5",
        "PERL_",
        "RUBY",
        "NODE_",
        "JAVA_",
        "_JAVA_",
        "JDK_",
        "DOTNET_",
        "NPM_CONFIG_",
        "npm_config_",
        "YARN_",
        "AWS_",
        "AZURE_",
        "PSMODULE",
        "XDG_",
        "VAULT_",
        "BUN_",
        "DENO_",
        "GOFLAGS",
        "GOPROXY",
        "CARGO_TARGET_",
        "CARGO_BUILD_",
        "LUA_INIT",
        "PIP_",
        "UV_",
        "CONDA_",
    ];
}

/// Harmless names under a hijack prefix.
const HIJACK_EXEMPT: &[&str] = &[
    "NODE_ENV",
    "PYTHONUNBUFFERED",
    "PYTHONIOENCODING",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "PYTHONWARNINGS",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PAGER",
    "GIT_TERMINAL_PROMPT",
    "GIT_PAGER_IN_USE",
    "NODE_NO_WARNINGS",
    "RUBYOPT_DISABLED",
];

/// The assignment changes which program runs or what code it loads.
pub fn is_hijack(name: &str) -> bool {
    if HIJACK_EXEMPT.contains(&name) {
        return false;
    }
    HIJACK_NAMES.contains(name)
        || HIJACK_PREFIXES
            .iter_bytes()
            .any(|p| name.as_bytes().starts_with(p))
        || name.contains("PATH")
        // Options, plugins, toolchains, wrappers and linkers a runner reads from the
        // environment (`PYTEST_ADDOPTS`, `PYTEST_PLUGINS`, `MAVEN_OPTS`, `RUSTUP_TOOLCHAIN`).
        || [
            "_ADDOPTS",
            "_OPTIONS",
            "_OPTS",
            "_PLUGINS",
            "_TOOLCHAIN",
            "_WRAPPER",
            "_LINKER",
            "_RUNNER",
            "_RCFILE",
            "_PROCESS_START",
        ]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

/// An exempt name whose value still loads code: `PYTHONWARNINGS=ignore::pkg.Warning` imports
/// `pkg` to find the category.
fn loads_by_value(name: &str, value: &str) -> bool {
    name == "PYTHONWARNINGS"
        && value
            .split(',')
            .any(|filter| filter.split(':').nth(2).is_some_and(|c| c.contains('.')))
}

/// Switches (no value) the Python and Ruby runners take.
const RUNNER_SWITCHES: &[&str] = &[
    "--frozen",
    "--locked",
    "--offline",
    "--no-sync",
    "--isolated",
    "--active",
    "--no-project",
    "--quiet",
    "--verbose",
    "--all-extras",
    "--no-dev",
    "--dev",
    "--no-cache",
];

/// npm packages `npx` may name that we know: `npx jest` runs the test runner.
const KNOWN_JS_TOOLS: &[&str] = &[
    "jest",
    "vitest",
    "mocha",
    "tsc",
    "eslint",
    "prettier",
    "playwright",
    "cypress",
    "ava",
    "tsx",
    "ts-node",
    "next",
    "vite",
    "webpack",
    "rollup",
    "esbuild",
    "biome",
    "stylelint",
    "node",
];

/// PyPI packages `uvx` may name that we know.
const KNOWN_PYTHON_TOOLS: &[&str] = &[
    "pytest", "mypy", "ruff", "black", "isort", "flake8", "pylint", "tox", "nox",
];

/// A program path in the system's own directories (`/usr/bin/git` is git).
pub fn trusted_program_path(path: &str) -> bool {
    // The build-tool wrappers a project checks in run the build tool, as `gradle` would.
    if matches!(path, "./gradlew" | "./mvnw") {
        return true;
    }
    const SYSTEM: &[&str] = &[
        "/bin/",
        "/usr/bin/",
        "/usr/local/bin/",
        "/sbin/",
        "/usr/sbin/",
        "/usr/local/sbin/",
        "/opt/homebrew/bin/",
    ];
    SYSTEM.iter().any(|dir| {
        path.strip_prefix(dir)
            .is_some_and(|rest| !rest.contains('/') && !rest.is_empty())
    })
}

/// The starting points of a `find`: the words after its leading options and before the first
/// expression word.
pub fn find_roots(args: &[Word]) -> Vec<Word> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        match word.text.as_str() {
            "-L" | "-H" | "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    args.iter()
        .skip(i)
        .take_while(|w| !w.text.starts_with('-') && w.text != "(" && w.text != "!")
        .cloned()
        .collect()
}

/// What a wrapper's peeling did.
enum Step {
    /// A wrapper was peeled: look at the new first word.
    Again,
    /// The current program is the one that runs.
    Runs,
    /// Everything that runs was pushed (or the command was ended as opaque).
    Done,
}

/// Peels one wrapper off `current`: its program, the program's word, and the words after it.
type Peel = fn(&mut Effective, String, Word, Vec<Word>, &mut Vec<Effective>) -> Step;

/// The shells: `-c` text is parsed, anything else they run is a script or their input.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "yash", "csh", "tcsh",
];

/// Every wrapper the peeling loop looks at, and how it is peeled: the one list of wrapper names.
/// Any other program is the one that runs.
const WRAPPERS: &[(&[&str], Peel)] = &[
    (
        &["command", "builtin", "exec", "nocorrect", "noglob"],
        peel_builtin,
    ),
    (
        &["sudo", "doas", "pkexec", "gosu", "su", "runas", "run0"],
        peel_privilege,
    ),
    (&["env"], peel_env),
    (&["timeout"], peel_timeout),
    (
        &["nice", "ionice", "chrt", "taskset", "cpulimit", "trickle"],
        peel_priority,
    ),
    (&["time"], peel_time),
    (
        &["nohup", "setsid", "disown", "stdbuf", "unbuffer", "chronic"],
        peel_detach,
    ),
    (&["watch"], peel_watch),
    (&["xargs"], peel_xargs),
    (&["find"], peel_find),
    (SHELLS, peel_shell),
    (&["busybox"], peel_busybox),
    (&["eval"], peel_eval),
    (&["source", "."], peel_source),
    (&["trap"], peel_trap),
    (&["npx", "pnpx", "bunx", "uvx"], peel_fetch_runner),
    (
        &["pipenv", "pdm", "hatch", "rye", "pixi"],
        peel_script_runner,
    ),
    (
        &["uv", "poetry", "bundle", "conda", "mamba"],
        peel_env_runner,
    ),
    (&["pnpm", "yarn", "bun", "npm"], peel_js_package_manager),
    (&["git"], peel_git),
];

const WRAPPER_NAME_COUNT: usize = {
    let (mut count, mut e) = (0, 0);
    while e < WRAPPERS.len() {
        #[allow(clippy::indexing_slicing)] // compile time only
        {
            count += WRAPPERS[e].0.len();
        }
        e += 1;
    }
    count
};

/// Every wrapper name and its entry in [`WRAPPERS`]; exists only while compiling.
#[allow(clippy::indexing_slicing)] // compile time only
const WRAPPER_NAMES: ([&str; WRAPPER_NAME_COUNT], [u8; WRAPPER_NAME_COUNT]) = {
    let mut names = [""; WRAPPER_NAME_COUNT];
    let mut entries = [0u8; WRAPPER_NAME_COUNT];
    let (mut at, mut e) = (0, 0);
    while e < WRAPPERS.len() {
        let mut n = 0;
        while n < WRAPPERS[e].0.len() {
            names[at] = WRAPPERS[e].0[n];
            entries[at] = e as u8;
            at += 1;
            n += 1;
        }
        e += 1;
    }
    (names, entries)
};

/// Each wrapper name's entry.
static WRAPPER_ENTRIES: [u8; WRAPPER_NAME_COUNT] = WRAPPER_NAMES.1;

/// Every wrapper name, packed.
static WRAPPER_TEXT: PackedNames<
    { static_index::total_len(&WRAPPER_NAMES.0) },
    WRAPPER_NAME_COUNT,
> = PackedNames::of(&WRAPPER_NAMES.0);

/// Wrapper names hashed at compile time into name positions.
static WRAPPER_INDEX: NameIndex<{ static_index::slots_for(WRAPPER_NAME_COUNT) }> =
    NameIndex::of(&WRAPPER_NAMES.0);

/// How `program` is peeled, when it is a wrapper.
fn wrapper(program: &str) -> Option<Peel> {
    let position = WRAPPER_INDEX
        .positions(program, |p| WRAPPER_TEXT.bytes_at(p))
        .next()?;
    let entry = WRAPPER_ENTRIES.get(position)?;
    WRAPPERS.get(usize::from(*entry)).map(|(_, peel)| *peel)
}

/// A shell: `-c` text is parsed, anything else it runs is a script or its input.
pub fn is_shell(program: &str) -> bool {
    SHELLS.contains(&program)
}

/// Peels `command` into the effective commands that run. Usually one; `sh -c` payloads and
/// `find -exec` give several.
pub fn unwrap(command: &SimpleCommand) -> Vec<Effective> {
    let mut out = Vec::new();
    peel(start_from(&Effective::default(), command.clone()), &mut out);
    out
}

/// Peels every command of a script, and marks the commands that read what a network fetch
/// wrote into their pipeline (directly, or through a decoder such as `base64 -d`).
pub fn unwrap_script(commands: Vec<SimpleCommand>, template: &Effective) -> Vec<Effective> {
    flatten(commands, template, peel)
}

fn text(word: Option<&Word>) -> &str {
    word.map(|w| w.text.as_str()).unwrap_or("")
}

fn base_name(path: &str) -> String {
    // The last `/` by `rfind` (a byte search), not by splitting from the back.
    path.rfind('/')
        .and_then(|at| path.get(at + 1..))
        .unwrap_or(path)
        .to_string()
}

/// Drops leading options of a wrapper. `valued` options take the next word (or `=value`).
/// Returns the remaining words and the options seen with their values.
fn strip_options<'a>(
    args: &'a [Word],
    valued: Names<'_>,
) -> (&'a [Word], Vec<(String, Option<Word>)>) {
    let mut seen = Vec::new();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let t = word.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if let Some((flag, value)) = t.split_once('=')
            && t.starts_with("--")
        {
            let mut v = word.clone();
            v.set_text(value.to_string());
            seen.push((flag.to_string(), Some(v)));
            i += 1;
            continue;
        }
        if valued.contains(t) {
            seen.push((t.to_string(), args.get(i + 1).cloned()));
            i += 2;
            continue;
        }
        // A short valued flag with its value attached: `-uroot`.
        if let Some(flag) = valued
            .iter_bytes()
            .find(|v| v.len() == 2 && t.as_bytes().starts_with(v) && t.len() > 2)
            .and_then(|_| t.get(..2))
        {
            let mut v = word.clone();
            v.set_text(t.get(2..).unwrap_or("").to_string());
            seen.push((flag.to_string(), Some(v)));
            i += 1;
            continue;
        }
        seen.push((t.to_string(), None));
        i += 1;
    }
    (args.get(i..).unwrap_or(&[]), seen)
}

/// The last `keep` words of a wrapper's own copy of its words, moved (they were copied a
/// second time): `keep` is the length of the tail `strip_options` left, always a suffix.
fn into_tail(mut rest: Vec<Word>, keep: usize) -> Vec<Word> {
    rest.drain(..rest.len().saturating_sub(keep));
    rest
}

fn has_flag(seen: &[(String, Option<Word>)], names: Names<'_>) -> bool {
    seen.iter().any(|(f, _)| {
        names.contains(f)
            || (f.starts_with('-')
                && !f.starts_with("--")
                && f.len() > 2
                && names.iter_bytes().any(|n| match n {
                    [_, letter] => f.as_bytes().contains(letter),
                    _ => false,
                }))
    })
}

fn flag_value<'a>(seen: &'a [(String, Option<Word>)], names: Names<'_>) -> Option<&'a Word> {
    seen.iter()
        .find(|(f, _)| names.contains(f))
        .and_then(|(_, v)| v.as_ref())
}

/// Parses shell text carried by a wrapper (`sh -c`, `eval`, `su -c`) and peels what it holds.
fn shell_text(mut outer: Effective, source: &Word, out: &mut Vec<Effective>) {
    outer.wrappers.push(Wrapper::ShellEval);
    if !source.is_literal() {
        outer.unread("the shell text is computed at run time");
        out.push(outer);
        return;
    }
    let depth = outer.surroundings.depth + 1;
    if depth > MAX_DEPTH {
        outer.opaque("nested shells too deep to analyse");
        out.push(outer);
        return;
    }
    let script = parse(&source.text, depth);
    if !script.problems.is_empty() {
        outer.opaque(&format!(
            "the shell text could not be parsed: {}",
            script.problems.join("; ")
        ));
        out.push(outer);
        return;
    }
    if script.commands.is_empty() {
        return;
    }
    let mut script = script;
    for inner in &mut script.commands {
        inner.surroundings.in_loop |= outer.surroundings.in_loop;
        inner.surroundings.conditional |= outer.surroundings.conditional;
        inner.surroundings.background |= outer.surroundings.background;
        inner.surroundings.isolated = true;
    }
    let template = Effective {
        assignments: outer.assignments.clone(),
        redirects: outer.redirects.clone(),
        wrappers: outer.wrappers.clone(),
        args_unknown: outer.args_unknown,
        fed_from_network: outer.fed_from_network,
        written: outer.written.clone(),
        ..Effective::default()
    };
    out.extend(unwrap_script(script.commands, &template));
}

fn peel(mut current: Effective, out: &mut Vec<Effective>) {
    let mut layers = 0;
    loop {
        layers += 1;
        if layers > 16 {
            current.opaque("more wrappers than the analysis follows");
            break;
        }
        let Some(first) = current.args.first() else {
            current.written_is_words = false;
            out.push(current);
            return;
        };
        if !first.is_literal() {
            current.written_is_words = false;
            current.program_path = first.text.to_string();
            current.program = UNRESOLVED.to_string();
            current.unread("the program name is computed at run time");
            out.push(current);
            return;
        }
        let program = base_name(&first.text);
        let Some(peel_wrapper) = wrapper(&program) else {
            // The common case: no wrapper. Move the words instead of copying them.
            let mut args = std::mem::take(&mut current.args);
            let first = args.remove(0);
            current.program = program;
            current.program_path = first.text.into_string();
            current.args = args;
            current.written_is_words &= layers == 1;
            break;
        };
        current.written_is_words = false;
        // The words are moved to the wrapper, not copied: every wrapper sets the words the
        // command runs with (`runs_as_given` when it runs as written, `restore_words` when it
        // is kept whole).
        let mut rest = std::mem::take(&mut current.args);
        let first = rest.remove(0);
        match peel_wrapper(&mut current, program, first, rest, out) {
            Step::Again => {}
            Step::Runs => break,
            Step::Done => return,
        }
    }
    if current.program.is_empty()
        && let Some(first) = current.args.first().cloned()
    {
        current.written_is_words = false;
        current.program = base_name(&first.text);
        current.program_path = first.text.into_string();
        current.args = current.args.get(1..).unwrap_or(&[]).to_vec();
    }
    // `bin/git` or `/tmp/evil/git` is not git: a program named by a path outside the system's
    // own directories is a file the engine has not read.
    if super::holds_byte(current.program_path.as_bytes(), b'/')
        && !trusted_program_path(&current.program_path)
    {
        let why = format!(
            "runs the file `{}`, which the engine has not read",
            current.program_path
        );
        current.opaque(&why);
    }
    // A value that holds code (`a='$(rm -rf ~)'`) runs when it is evaluated later, in
    // arithmetic or by `eval`.
    if current
        .assignments
        .iter()
        .any(|(_, v)| v.text.contains("$(") || v.text.contains('`'))
    {
        current.unread("a value that holds code, which runs if it is evaluated later");
    }
    let hijack = current
        .assignments
        .iter()
        .find(|(name, value)| is_hijack(name) || loads_by_value(name, &value.text))
        .map(|(name, _)| name.clone());
    if let Some(name) = hijack {
        current.unread(&format!(
            "`{name}=` changes which program runs or what it loads"
        ));
    }
    out.push(current);
}

/// Shell builtins that run their arguments as a command.
fn peel_builtin(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    if program == "command" && rest.iter().any(|w| w.text == "-v" || w.text == "-V") {
        // A lookup, judged by the knowledge.
        return runs_as_given(current, program, first, rest, out);
    }
    if program == "exec" && rest.is_empty() {
        return runs_as_given(current, program, first, rest, out);
    }
    let (tail, _) = strip_options(&rest, flags!["-a"]);
    let keep = tail.len();
    current.args = into_tail(rest, keep);
    Step::Again
}

/// Privilege: the command runs as another user.
fn peel_privilege(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    current.wrappers.push(Wrapper::Privilege);
    match program.as_str() {
        "su" => {
            let (tail, seen) = strip_options(
                &rest,
                flags!["-c", "--command", "-s", "--shell", "-g", "-G", "-w"],
            );
            match flag_value(&seen, flags!["-c", "--command"]) {
                Some(source) => {
                    let source = source.clone();
                    current.args = Vec::new();
                    shell_text(std::mem::take(current), &source, out);
                    return Step::Done;
                }
                None => {
                    let _ = tail;
                    current.program = program;
                    restore_words(current, first, rest);
                    current.opaque("a privileged login shell");
                    out.push(std::mem::take(current));
                    return Step::Done;
                }
            }
        }
        "gosu" => {
            current.args = rest.get(1..).unwrap_or(&[]).to_vec();
        }
        "runas" => {
            current.program = program;
            restore_words(current, first, rest);
            current.opaque("runas runs a command line we do not parse");
            out.push(std::mem::take(current));
            return Step::Done;
        }
        _ => {
            let valued = flags![
                "-u",
                "-g",
                "-h",
                "-p",
                "-C",
                "-D",
                "-r",
                "-t",
                "-U",
                "-T",
                "-R",
                "--user",
                "--group",
                "--host",
                "--prompt",
                "--chdir",
                "--role",
                "--type",
                "--other-user",
                "--close-from",
                "--command-timeout",
                "--chroot",
            ];
            let (tail, seen) = strip_options(&rest, valued);
            if has_flag(
                &seen,
                flags!["-s", "-i", "--shell", "--login", "-e", "--edit"],
            ) || tail.is_empty()
            {
                current.program = program;
                let keep = tail.len();
                current.args = into_tail(rest, keep);
                current.opaque("a privileged shell or editor");
                out.push(std::mem::take(current));
                return Step::Done;
            }
            if let Some(dir) = flag_value(&seen, flags!["-D", "--chdir"]) {
                current.chdir = Some(dir.clone());
            }
            let keep = tail.len();
            current.args = into_tail(rest, keep);
        }
    }
    Step::Again
}

/// `env`: assignments, a directory, a split string, then the command.
fn peel_env(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    current.wrappers.push(Wrapper::Env);
    let valued = flags![
        "-u",
        "--unset",
        "-S",
        "--split-string",
        "-C",
        "--chdir",
        "-P",
        "-a",
        "--argv0",
    ];
    let (tail, seen) = strip_options(&rest, valued);
    if let Some(split) = flag_value(&seen, flags!["-S", "--split-string"]) {
        let split = split.clone();
        let mut inner = current.clone();
        inner.args = Vec::new();
        // `env -S 'a b' c` runs the split string followed by the remaining words.
        let mut joined = split.clone();
        let mut text = joined.text.to_string();
        for word in tail {
            text.push(' ');
            text.push_str(word.raw());
        }
        joined.set_text(text);
        shell_text(inner, &joined, out);
        return Step::Done;
    }
    if flag_value(&seen, flags!["-P"]).is_some() {
        current.program = program;
        restore_words(current, first, rest);
        current.unread("env -P searches another PATH for the program");
        out.push(std::mem::take(current));
        return Step::Done;
    }
    if let Some(dir) = flag_value(&seen, flags!["-C", "--chdir"]) {
        current.chdir = Some(dir.clone());
    }
    let mut words = tail.iter();
    let mut remaining = Vec::new();
    for word in words.by_ref() {
        if remaining.is_empty()
            && let Some((name, value)) = word.text.split_once('=')
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            let raw = word
                .raw()
                .split_once('=')
                .map(|(_, r)| r.to_string())
                .unwrap_or_default();
            let mut v = word.clone();
            v.set_text(value.to_string());
            v.set_raw(raw);
            current.assignments.push((name.to_string(), v));
            continue;
        }
        remaining.push(word.clone());
    }
    if remaining.is_empty() {
        current.args = vec![first];
        return Step::Runs;
    }
    current.args = remaining;
    Step::Again
}

/// `timeout DURATION command`.
fn peel_timeout(
    current: &mut Effective,
    _program: String,
    _first: Word,
    rest: Vec<Word>,
    _out: &mut Vec<Effective>,
) -> Step {
    current.wrappers.push(Wrapper::Timing);
    let (tail, _) = strip_options(&rest, flags!["-s", "--signal", "-k", "--kill-after"]);
    current.args = tail.get(1..).unwrap_or(&[]).to_vec();
    Step::Again
}

/// Scheduling and throttling: the command runs as it would, slower or elsewhere.
fn peel_priority(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    current.wrappers.push(Wrapper::Timing);
    let valued = flags![
        "-n",
        "--adjustment",
        "-c",
        "--class",
        "-t",
        "-l",
        "-p",
        "-d",
        "-u",
    ];
    let (tail, seen) = strip_options(&rest, valued);
    if seen.iter().any(|(f, _)| f == "-p" || f == "--pid") {
        // Acts on a running process: judged as process control.
        return runs_as_given(current, program, first, rest, out);
    }
    // `chrt PRIO cmd` and `taskset MASK cmd` take a positional first, but
    // `taskset -c LIST cmd` gives the list as the option's value.
    let list_given =
        program == "taskset" && seen.iter().any(|(f, _)| f == "-c" || f == "--cpu-list");
    let skip = usize::from(matches!(program.as_str(), "chrt" | "taskset") && !list_given);
    current.args = tail.get(skip..).unwrap_or(&[]).to_vec();
    Step::Again
}

/// `time`: the command, and a file its report may be written to.
fn peel_time(
    current: &mut Effective,
    _program: String,
    _first: Word,
    rest: Vec<Word>,
    _out: &mut Vec<Effective>,
) -> Step {
    current.wrappers.push(Wrapper::Timing);
    let (tail, seen) = strip_options(&rest, flags!["-f", "--format", "-o", "--output"]);
    if let Some(output) = flag_value(&seen, flags!["-o", "--output"]) {
        current.redirects.push(Redirect {
            op: ">".to_string(),
            fd: None,
            target: output.clone(),
            is_file: true,
        });
    }
    let keep = tail.len();
    current.args = into_tail(rest, keep);
    Step::Again
}

/// Detaching and buffering: the command runs as it would.
fn peel_detach(
    current: &mut Effective,
    program: String,
    _first: Word,
    rest: Vec<Word>,
    _out: &mut Vec<Effective>,
) -> Step {
    current.wrappers.push(if program == "stdbuf" {
        Wrapper::Env
    } else {
        Wrapper::Detach
    });
    let (tail, _) = strip_options(&rest, flags!["-i", "-o", "-e"]);
    let keep = tail.len();
    current.args = into_tail(rest, keep);
    Step::Again
}

/// `watch`: the command runs again and again, through `sh -c` unless `-x`.
fn peel_watch(
    current: &mut Effective,
    _program: String,
    _first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    current.wrappers.push(Wrapper::Timing);
    current.surroundings.in_loop = true;
    let (tail, seen) = strip_options(&rest, flags!["-n", "--interval", "-q", "--equexit", "-g"]);
    if !has_flag(&seen, flags!["-x", "--exec"]) {
        // watch joins its arguments and runs them with `sh -c`.
        let mut text = String::new();
        for (i, word) in tail.iter().enumerate() {
            if i > 0 {
                text.push(' ');
            }
            if !word.is_literal() {
                text.push(UNRESOLVED);
            }
            text.push_str(&word.text);
        }
        // Written nowhere as one word: no written form.
        let joined = Word::new(text, String::new());
        current.args = Vec::new();
        shell_text(std::mem::take(current), &joined, out);
        return Step::Done;
    }
    let keep = tail.len();
    current.args = into_tail(rest, keep);
    Step::Again
}

/// `xargs`: the command, with arguments read from the input.
fn peel_xargs(
    current: &mut Effective,
    _program: String,
    _first: Word,
    rest: Vec<Word>,
    _out: &mut Vec<Effective>,
) -> Step {
    current.wrappers.push(Wrapper::StdinArgs);
    current.args_unknown = true;
    let valued = flags![
        "-I",
        "-L",
        "-n",
        "-P",
        "-d",
        "-E",
        "-s",
        "-a",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--replace",
        "--max-lines",
        "--eof",
    ];
    let (tail, _) = strip_options(&rest, valued);
    current.args = if tail.is_empty() {
        vec![Word::plain("echo")]
    } else {
        tail.to_vec()
    };
    Step::Again
}

/// `find … -exec`: the walk, and each command it runs on what it finds.
fn peel_find(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    let exec_at = rest
        .iter()
        .position(|w| matches!(w.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"));
    let Some(at) = exec_at else {
        return runs_as_given(current, program, first, rest, out);
    };
    // Each `-exec` is peeled by a nested call: bound how many are followed.
    if current.surroundings.depth > 4 * MAX_DEPTH {
        return end_opaque(
            std::mem::take(current),
            program,
            rest,
            "more `-exec` clauses than the analysis follows",
            out,
        );
    }
    current.surroundings.depth += 1;
    let inner_end = rest
        .iter()
        .skip(at + 1)
        .position(|w| w.text == ";" || w.text == "+")
        .map(|p| p + at + 1)
        .unwrap_or(rest.len());
    let inner: Vec<Word> = rest.get(at + 1..inner_end).unwrap_or(&[]).to_vec();
    let mut remaining: Vec<Word> = vec![first.clone()];
    remaining.extend(rest.get(..at).unwrap_or(&[]).iter().cloned());
    remaining.extend(rest.get(inner_end + 1..).unwrap_or(&[]).iter().cloned());
    // The paths walked: after the options that may precede them (`-L`, `-H`, `-P`,
    // `-O3`, `-D debugopts`).
    let walked: Vec<Word> = find_roots(&rest);
    let mut finder = current.clone();
    finder.args = remaining;
    peel(finder, out);
    let mut exec = std::mem::take(current);
    exec.wrappers.push(Wrapper::FindExec);
    exec.args_unknown = true;
    exec.walked_paths = if walked.is_empty() {
        vec![Word::plain(".")]
    } else {
        walked
    };
    exec.args = inner
        .into_iter()
        .map(|w| {
            if w.text.contains("{}") {
                let mut w = w;
                let text = w.text.replace("{}", &UNRESOLVED.to_string());
                w.set_text(text);
                w
            } else {
                w
            }
        })
        .collect();
    exec.redirects = Vec::new();
    peel(exec, out);
    Step::Done
}

/// A shell: `-c` text is parsed; a script or its input is not read.
fn peel_shell(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    let (tail, seen) = strip_options(
        &rest,
        flags!["-o", "+o", "-O", "+O", "--rcfile", "--init-file"],
    );
    let login = has_flag(
        &seen,
        flags!["-l", "--login", "-i", "--rcfile", "--init-file"],
    );
    let command_flag = seen
        .iter()
        .any(|(f, _)| f == "-c" || (f.starts_with('-') && !f.starts_with("--") && f.contains('c')));
    current.program = program.clone();
    if command_flag && !login {
        let Some(source) = tail.first().cloned() else {
            restore_words(current, first, rest);
            current.opaque("`-c` without shell text");
            out.push(std::mem::take(current));
            return Step::Done;
        };
        current.args = Vec::new();
        shell_text(std::mem::take(current), &source, out);
        return Step::Done;
    }
    let from_input = tail.is_empty() || has_flag(&seen, flags!["-s"]);
    // A here-document or here-string carries the program: it is shell text like `-c`'s.
    if from_input
        && !login
        && let Some(at) = current.redirects.iter().rposition(|r| {
            matches!(r.op.as_str(), "<<" | "<<-" | "<<<") && r.fd.is_none_or(|fd| fd == 0)
        })
        && current.surroundings.piped_from.is_none()
    {
        let body = current.redirects.remove(at).target;
        current.args = Vec::new();
        shell_text(std::mem::take(current), &body, out);
        return Step::Done;
    }
    current.wrappers.push(Wrapper::ShellEval);
    let keep = tail.len();
    current.args = into_tail(rest, keep);
    if login {
        current.unread("a login or interactive shell runs startup files");
    } else if from_input {
        current.unread("a shell reading commands from its input");
    } else {
        current.opaque("a shell script the engine has not read");
    }
    out.push(std::mem::take(current));
    Step::Done
}

/// `busybox APPLET`: the applet.
fn peel_busybox(
    current: &mut Effective,
    _program: String,
    _first: Word,
    rest: Vec<Word>,
    _out: &mut Vec<Effective>,
) -> Step {
    current.args = rest;
    Step::Again
}

/// `eval`: its words joined are shell text.
fn peel_eval(
    current: &mut Effective,
    program: String,
    _first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    let mut text = String::new();
    for (i, word) in rest.iter().enumerate() {
        if i > 0 {
            text.push(' ');
        }
        text.push_str(&word.text);
    }
    // Written nowhere as one word: no written form.
    let joined = Word::new(text, String::new());
    current.args = Vec::new();
    current.program = program;
    shell_text(std::mem::take(current), &joined, out);
    Step::Done
}

/// `source`/`.`: a script runs in this shell.
fn peel_source(
    current: &mut Effective,
    program: String,
    _first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    end_opaque(
        std::mem::take(current),
        program,
        rest,
        "sources a script the engine has not read",
        out,
    )
}

/// `trap`: code that runs later.
fn peel_trap(
    current: &mut Effective,
    program: String,
    _first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    end_unread(
        std::mem::take(current),
        program,
        rest,
        "trap runs code later",
        out,
    )
}

/// Package runners that fetch what they run, unless it is a known tool.
fn peel_fetch_runner(
    current: &mut Effective,
    program: String,
    _first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    let (tail, seen) = strip_options(
        &rest,
        flags!["-p", "--package", "-c", "--call", "--from", "--with"],
    );
    // A known tool of the runner's own ecosystem is the tool (fetched if missing, but
    // the real package of that name); anything else is an arbitrary download.
    let known = if program == "uvx" {
        KNOWN_PYTHON_TOOLS
    } else {
        KNOWN_JS_TOOLS
    };
    if let Some(tool) = tail.first().filter(|_| seen.is_empty())
        && known.contains(&tool.text.as_str())
    {
        current.wrappers.push(Wrapper::Runner);
        current.runner = Some(program.clone());
        let keep = tail.len();
        current.args = into_tail(rest, keep);
        return Step::Again;
    }
    current.wrappers.push(Wrapper::FetchRun);
    end_opaque(
        std::mem::take(current),
        program,
        rest,
        "fetches a package and runs it",
        out,
    )
}

/// Project tools whose `run`/`exec` may run a script of the project file first.
fn peel_script_runner(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    if !matches!(text(rest.first()), "run" | "exec") {
        return runs_as_given(current, program, first, rest, out);
    }
    // These run a script of the project file first, if one has that name.
    current.program = program;
    current.args = rest;
    current.opaque("runs a script defined in the project file, which the engine has not read");
    out.push(std::mem::take(current));
    Step::Done
}

/// Environment managers whose `run`/`exec` runs a command in their environment.
fn peel_env_runner(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    if !matches!(text(rest.first()), "run" | "exec") {
        return runs_as_given(current, program, first, rest, out);
    }
    current.wrappers.push(Wrapper::Runner);
    current.runner = Some(program.clone());
    let valued = flags![
        "-n",
        "--name",
        "-e",
        "--env",
        "--with",
        "--python",
        "-p",
        "--group",
        "--package",
        "--extra",
        "--directory",
        "--project",
        "--env-file",
        "--index",
        "--cache-dir",
        "--prefix",
        "--with-requirements",
        "--with-editable",
        "--index-url",
        "--extra-index-url",
        "--find-links",
        "--from",
        "--script",
    ];
    let (tail, seen) = strip_options(rest.get(1..).unwrap_or(&[]), valued);
    // The runner's own options change what runs and where: they are judged, not dropped.
    for (flag, value) in &seen {
        match flag.as_str() {
            // Packages and indexes: something is downloaded and runs.
            "--with"
            | "--with-requirements"
            | "--with-editable"
            | "--index"
            | "--index-url"
            | "--extra-index-url"
            | "--find-links"
            | "-f"
            | "--from" => {
                current.wrappers.push(Wrapper::FetchRun);
            }
            // An interpreter named by a path is a program the engine has not read; a version
            // is the runner's own.
            "--python" | "-p" if program == "uv" => {
                let version = value.as_ref().is_some_and(|v| {
                    v.text
                        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                        .bytes()
                        .all(|b| b.is_ascii_digit() || b == b'.')
                        && !v.text.contains('/')
                });
                if !version {
                    current.unread("the runner is given an interpreter the engine does not know");
                }
            }
            "--directory" => current.chdir = value.clone(),
            // The runner writes its cache there (`uv run --cache-dir ~/.ssh pytest`).
            "--cache-dir" => {
                if let Some(dir) = value {
                    current
                        .loads
                        .push((dir.clone(), crate::model::Access::Write));
                }
            }
            // conda's and mamba's environment by its path: its programs run.
            "-p" | "--prefix" if matches!(program.as_str(), "conda" | "mamba") => {
                if let Some(dir) = value {
                    current
                        .loads
                        .push((dir.clone(), crate::model::Access::Execute));
                }
            }
            "--project" | "--script" => {
                if let Some(dir) = value {
                    current
                        .loads
                        .push((dir.clone(), crate::model::Access::Execute));
                }
            }
            // Variables from a file can change what runs (`PYTHONPATH`, `PYTHONSTARTUP`).
            "--env-file" => {
                if let Some(file) = value {
                    current
                        .loads
                        .push((file.clone(), crate::model::Access::Read));
                }
                current
                    .unread("the runner loads variables from a file, which can change what runs");
            }
            _ => {}
        }
    }
    if seen
        .iter()
        .any(|(f, v)| v.is_none() && f.starts_with("--") && !RUNNER_SWITCHES.contains(&f.as_str()))
    {
        // An option we do not know may take a value: the program is not certain.
        return end_unread(
            std::mem::take(current),
            program,
            rest,
            "a runner option the engine does not know",
            out,
        );
    }
    let keep = tail.len();
    current.args = into_tail(rest, keep);
    Step::Again
}

/// JavaScript package managers: `dlx`/`x` fetch and run; `npm exec`/`pnpm exec` run a tool.
fn peel_js_package_manager(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    out: &mut Vec<Effective>,
) -> Step {
    if matches!(text(rest.first()), "dlx" | "x") {
        current.wrappers.push(Wrapper::FetchRun);
        return end_opaque(
            std::mem::take(current),
            program,
            rest,
            "fetches a package and runs it",
            out,
        );
    }
    if matches!(program.as_str(), "pnpm" | "npm") && text(rest.first()) == "exec" {
        let (tail, seen) = strip_options(
            rest.get(1..).unwrap_or(&[]),
            flags!["-c", "--call", "--package", "-p"],
        );
        if let Some(source) = flag_value(&seen, flags!["-c", "--call"]) {
            let source = source.clone();
            current.args = Vec::new();
            current.program = program;
            shell_text(std::mem::take(current), &source, out);
            return Step::Done;
        }
        // `npm exec` is npx; `pnpm exec` runs the project's own binaries.
        let known = program == "pnpm"
            || tail
                .first()
                .is_some_and(|t| KNOWN_JS_TOOLS.contains(&t.text.as_str()));
        if !known || !seen.is_empty() {
            current.wrappers.push(Wrapper::FetchRun);
            return end_opaque(
                std::mem::take(current),
                program,
                rest,
                "fetches a package and runs it",
                out,
            );
        }
        current.wrappers.push(Wrapper::Runner);
        current.runner = Some(program.clone());
        let keep = tail.len();
        current.args = into_tail(rest, keep);
        return Step::Again;
    }
    runs_as_given(current, program, first, rest, out)
}

/// `git`: its own options (`-c` keys, `-C`, another repository), then git runs.
fn peel_git(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    _out: &mut Vec<Effective>,
) -> Step {
    let valued = flags![
        "-c",
        "-C",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--exec-path",
        "--super-prefix",
    ];
    let (tail, seen) = strip_options(&rest, valued);
    for (flag, value) in &seen {
        match flag.as_str() {
            "-c" | "--config-env" => {
                let key = value
                    .as_ref()
                    .map(|v| v.text.split('=').next().unwrap_or("").to_ascii_lowercase())
                    .unwrap_or_default();
                current.config_keys.push(key);
            }
            "-C" => current.chdir = value.clone(),
            "--exec-path" | "--git-dir" | "--work-tree"
                if (value.is_some() || flag == "--git-dir" || flag == "--work-tree") =>
            {
                current.unread("git pointed at another repository or executable path");
            }
            _ => {}
        }
    }
    current.config_keys.sort();
    current.program = program;
    current.program_path = first.text.into_string();
    let keep = tail.len();
    current.args = into_tail(rest, keep);
    Step::Runs
}

/// The wrapper is kept whole as the command (an opaque one): its words as written, the wrapper's
/// own name first, as they were before they were handed to it.
fn restore_words(current: &mut Effective, first: Word, rest: Vec<Word>) {
    let mut words = Vec::with_capacity(rest.len() + 1);
    words.push(first);
    words.extend(rest);
    current.args = words;
}

/// Not peeled after all (a subcommand that runs nothing else): the program runs as given.
fn runs_as_given(
    current: &mut Effective,
    program: String,
    first: Word,
    rest: Vec<Word>,
    _out: &mut Vec<Effective>,
) -> Step {
    current.program = program;
    current.program_path = first.text.into_string();
    current.args = rest;
    Step::Runs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each wrapper name is in one entry, and the index finds that entry for it.
    #[test]
    fn every_wrapper_name_is_in_one_entry_and_found() {
        let mut seen = std::collections::HashSet::new();
        for (entry, (names, _)) in WRAPPERS.iter().enumerate() {
            for name in *names {
                assert!(seen.insert(*name), "`{name}` is in two wrapper entries");
                let position = WRAPPER_INDEX
                    .positions(name, |p| WRAPPER_TEXT.bytes_at(p))
                    .next()
                    .unwrap();
                assert_eq!(usize::from(WRAPPER_ENTRIES[position]), entry, "{name}");
                assert!(wrapper(name).is_some());
            }
        }
        for absent in ["", "gitx", "Sudo", "envs", "ls"] {
            assert!(wrapper(absent).is_none(), "{absent}");
        }
    }

    /// A wrapper is handed its words moved, not copied: one kept whole gets them back as
    /// written (its own name first), one that runs as given keeps its arguments.
    #[test]
    fn a_wrapper_kept_whole_or_run_as_given_keeps_its_words() {
        let cases: [(&str, &str, &[&str]); 8] = [
            ("env -P /x ls -l", "env", &["env", "-P", "/x", "ls", "-l"]),
            (
                "runas /user:admin cmd",
                "runas",
                &["runas", "/user:admin", "cmd"],
            ),
            ("su -", "su", &["su", "-"]),
            ("sh -c", "sh", &["sh", "-c"]),
            ("command -v git", "command", &["-v", "git"]),
            ("exec", "exec", &[]),
            ("nice -p 12", "nice", &["-p", "12"]),
            ("find . -name x", "find", &[".", "-name", "x"]),
        ];
        for (command, program, words) in cases {
            let script = parse(command, 0);
            let effectives = unwrap(script.commands.first().unwrap());
            let effective = effectives.first().unwrap();
            let args: Vec<&str> = effective.args.iter().map(|w| w.text.as_str()).collect();
            assert_eq!(
                (effective.program.as_str(), args.as_slice()),
                (program, words),
                "{command}"
            );
        }
    }
}
