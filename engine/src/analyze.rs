//! From a tool call to classified actions: the front door of the engine.
//!
//! Shell commands go through the shell analysis and the knowledge tables; structured tools
//! (Read, Edit, WebFetch, MCP, Cursor's tools, …) through [`crate::tools`]. Either way every
//! path is resolved and placed here, the capability is corrected by where its paths lie, and
//! anything not accounted for makes the action not understood.

use std::borrow::Cow;

use crate::knowledge::{self, Classification, Invocation};
use crate::model::{
    Access, Action, ActionFlags, Analysis, Capability as C, Exposure, Reach, Reversibility, Scale,
    Subject, ToolCall,
};
use crate::paths::{self, Roots, resolve};
use crate::shell::lex::Word;
use crate::shell::parse::parse;
use crate::shell::script::{Effective, Wrapper};
use crate::shell::unwrap::{is_shell, trusted_program_path, unwrap_script};
use crate::signature::{Normalizer, redact_text};
use crate::spelling::{effective_text, shell_signature, shell_words, spell};
use crate::targets::place_targets;

/// Analyses one tool call relative to `roots`.
pub fn analyze(call: &ToolCall, roots: &Roots) -> Analysis {
    // Borrowed when it is already normal (it nearly always is): copied, it was copied again
    // for every command of the script.
    // Whether it is known to be normal travels with it: paths are resolved against it.
    let (cwd, cwd_normal): (Cow<'_, str>, bool) = match call.cwd.as_deref() {
        Some(dir) if paths::is_normal(dir) => (Cow::Borrowed(dir), true),
        Some(dir) => (Cow::Owned(paths::normalize(dir)), true),
        None => (Cow::Borrowed(roots.project.as_str()), false),
    };
    // The tool's name is looked up once, for the shell test and the canonical name both.
    let canonical = crate::tools::canonical_of(&call.tool);
    let mut analysis = match crate::tools::shell_command_of(call, canonical) {
        Some(shell) => {
            // The directory the call names is where every command of it runs.
            let dir = shell.dir.map(|d| resolve(d, Some(&cwd), roots));
            let mut a = match &dir {
                Some(Some(d)) => analyze_shell(&shell.command, d, paths::is_normal(d), roots),
                _ => analyze_shell(&shell.command, &cwd, cwd_normal, roots),
            };
            if let (Some(None), Some(written)) = (&dir, shell.dir) {
                for action in &mut a.actions {
                    action.understood = false;
                    action.unknowns.push(format!(
                        "runs in `{}`, a directory the engine cannot tell",
                        redact_text(written)
                    ));
                }
            }
            // The agent was told to leave its sandbox: never learnable.
            if shell.unsandboxed {
                for action in &mut a.actions {
                    action.signature = format!("unsandboxed {}", action.signature);
                    action.blast.reach = action.blast.reach.max(Reach::Machine);
                    action.understood = false;
                    action.unknowns.push("runs outside the sandbox".to_string());
                }
            }
            if shell.background {
                for action in &mut a.actions {
                    action.flags.background = true;
                }
            }
            a
        }
        None => {
            let mut action = crate::tools::structured(call, &cwd, roots);
            crate::net::Reaches::of_input(&call.input).mark(&mut action.flags);
            Analysis {
                actions: vec![action],
                understood: true,
                problems: Vec::new(),
                piped_from_network: false,
            }
        }
    };
    // Borrowed: the name is only asked of, never kept.
    let tool: &str = canonical.unwrap_or(&call.tool);
    let call_args = std::sync::Arc::new(crate::tools::canonical_args(tool, &call.input));
    for action in &mut analysis.actions {
        analysis.problems.extend(action.unknowns.iter().cloned());
        action.subject.call_args = Some(std::sync::Arc::clone(&call_args));
        action.subject.descriptor.clone_from(&call.descriptor);
    }
    analysis.understood = analysis.problems.is_empty();
    analysis
}

/// Programs that run code they read from their input.
fn runs_code(effective: &Effective) -> bool {
    let program = effective.program.as_str();
    is_shell(program)
        || effective.wrappers.contains(&Wrapper::ShellEval)
        || knowledge::RUNS_INPUT.contains(program)
}

/// Analyses shell text run in `cwd`. Problems are reported on the actions (`unknowns`); the
/// caller gathers them.
/// `cwd_normal`: `cwd` is known to be normal (paths are resolved against it).
pub fn analyze_shell(command: &str, cwd: &str, cwd_normal: bool, roots: &Roots) -> Analysis {
    let mut script = parse(command, 0);
    let mut effectives = unwrap_script(std::mem::take(&mut script.commands), &Effective::default());
    if effectives.iter().any(evaluates_subscripts) {
        effectives = with_subscript_code(effectives);
    }
    let mut piped_from_network = false;
    let mut cwd_now: Option<Cow<'_, str>> = Some(Cow::Borrowed(cwd));
    // After a `cd`, the directory is not taken to be normal (it is asked again when resolving).
    let mut cwd_now_normal = cwd_normal;
    // One action per effective command (or one for none): an action is large, and growing the
    // list moved them.
    let mut actions = Vec::with_capacity(effectives.len().max(1));
    // Each effective command is moved into its action (its written text is not copied).
    for effective in effectives {
        // Network bytes reach a program that runs what it reads (not a script file it names).
        let piped = effective.fed_from_network
            && runs_code(&effective)
            && effective
                .args
                .iter()
                .all(|w| w.text.starts_with('-') || effective.program == "eval");
        piped_from_network |= piped;
        if matches!(effective.program.as_str(), "cd" | "pushd" | "popd") {
            cwd_now = change_directory(&effective, cwd_now.as_deref(), roots).map(Cow::Owned);
            cwd_now_normal = false;
        }
        actions.push(classify_effective(
            effective,
            cwd_now.as_deref(),
            cwd_now_normal,
            roots,
            piped,
        ));
    }
    let mut problems = script.problems;
    if actions.is_empty() {
        if problems.is_empty() {
            problems.push(if command.trim().is_empty() {
                "an empty command".to_string()
            } else {
                "nothing the engine could analyse".to_string()
            });
        }
        actions.push(unknown_action(command, &problems));
    } else if !problems.is_empty() {
        // A command that did not parse cleanly is not understood in any part.
        for action in &mut actions {
            action.understood = false;
        }
        for action in &mut actions {
            // What did not parse may hide effects no rule for the parsed part names.
            action.subject.unnamed_effects = true;
        }
        if let Some(first) = actions.first_mut() {
            first.unknowns.extend(problems);
        }
    }
    Analysis {
        actions,
        understood: false,
        problems: Vec::new(),
        piped_from_network,
    }
}

/// The working directory after `cd`/`pushd`/`popd`; `None` when it is not knowable. A `cd`
/// whose effect depends on control flow makes later relative paths ambiguous (inside a
/// subshell it would not leak, but scopes are not tracked, so this errs towards unknown).
fn change_directory(effective: &Effective, cwd: Option<&str>, roots: &Roots) -> Option<String> {
    let ctx = effective.surroundings;
    if ctx.isolated || ctx.conditional || ctx.in_loop || ctx.background {
        return None;
    }
    let target = effective
        .args
        .iter()
        .find(|w| !w.text.starts_with('-') || w.text == "-");
    match (effective.program.as_str(), target) {
        ("popd", _) => None,
        (_, None) => Some(roots.home.clone()),
        (_, Some(w)) if w.text == "-" => None,
        (_, Some(w)) => resolve(&w.text, cwd, roots),
    }
}

fn unknown_action(text: &str, why: &[String]) -> Action {
    Action {
        capability: C::ExecUnknown,
        blast: C::ExecUnknown.default_blast(),
        signature: "<unparsed>".to_string(),
        display: redact_text(text),
        targets: Vec::new(),
        understood: false,
        unknowns: why.to_vec(),
        flags: ActionFlags::default(),
        subject: Subject {
            tool: "Bash".to_string(),
            command: Some(text.to_string()),
            written: Some(text.to_string()),
            ..Subject::default()
        },
    }
}

/// Classifies one effective command run in `cwd` (`None` when the directory is unknown).
fn classify_effective(
    owned: Effective,
    cwd: Option<&str>,
    cwd_normal: bool,
    roots: &Roots,
    piped_from_network: bool,
) -> Action {
    let effective = &owned;
    let local_cwd: Option<Cow<'_, str>> = match &effective.chdir {
        Some(dir) => resolve(&dir.text, cwd, roots).map(Cow::Owned),
        None => cwd.map(Cow::Borrowed),
    };
    let cwd = local_cwd.as_deref();
    let mut judgement = if let Some(why) = &effective.opaque {
        let base =
            if effective.program.is_empty() || crate::shell::holds_unresolved(&effective.program) {
                None
            } else {
                knowledge::classify(&Invocation {
                    program: &effective.program,
                    args: &effective.args,
                    config_keys: &effective.config_keys,
                })
            };
        let shell = is_shell(&effective.program);
        let mut j = Classification::opaque(
            if shell {
                C::ExecInterpreter
            } else {
                C::ExecUnknown
            },
            why,
        );
        if let Some(base) = base {
            j.targets = base.targets;
            j.persistence = base.persistence;
            j.unread_code = base.unread_code;
        }
        j.unread_code |= effective.unread;
        if crate::shell::holds_byte(effective.program_path.as_bytes(), b'/')
            && !trusted_program_path(&effective.program_path)
        {
            j.targets
                .push((Word::plain(&effective.program_path), Access::Execute));
        }
        if shell {
            // `bash script.sh` reads and runs the script.
            if let Some(script) = effective.args.iter().find(|w| !w.text.starts_with('-')) {
                j.targets.push((script.clone(), Access::Execute));
            }
        }
        j
    } else if effective.program.is_empty() {
        if effective.redirects.iter().any(|r| r.writes()) {
            Classification::new(C::FsWriteWorkspace)
        } else {
            Classification::new(C::Meta)
        }
    } else {
        let invocation = Invocation {
            program: &effective.program,
            args: &effective.args,
            config_keys: &effective.config_keys,
        };
        match knowledge::classify(&invocation) {
            Some(j) => j,
            None if crate::shell::holds_byte(effective.program_path.as_bytes(), b'/') => {
                let mut j = Classification::opaque(
                    C::ExecUnknown,
                    "runs a program or script the engine has not read",
                );
                j.targets
                    .push((Word::plain(&effective.program_path), Access::Execute));
                j
            }
            None => Classification::opaque(
                C::ExecUnknown,
                &format!(
                    "`{}` is a program the engine does not know",
                    effective.program
                ),
            ),
        }
    };
    judgement.targets.extend(effective.loads.iter().cloned());
    runs_elsewhere(effective, &mut judgement, cwd, roots);
    reads_commands_from_input(effective, &mut judgement);
    let mut unknowns: Vec<String> = judgement.opaque.iter().cloned().collect();
    let mut flags = ActionFlags {
        unread_code: judgement.unread_code,
        piped_from_network,
        persistence: judgement.persistence,
        in_loop: effective.surroundings.in_loop,
        background: effective.surroundings.background,
        ..ActionFlags::default()
    };
    for wrapper in &effective.wrappers {
        match wrapper {
            Wrapper::Privilege => {
                flags.privilege = true;
                judgement.blast.reach = judgement.blast.reach.max(Reach::Machine);
                judgement.blast.reversibility =
                    judgement.blast.reversibility.max(Reversibility::Hard);
            }
            Wrapper::FetchRun => flags.fetch_run = true,
            _ => {}
        }
    }
    if judgement.capability == C::ExecRemote {
        flags.remote = true;
    }
    if effective.surroundings.in_loop {
        judgement.blast.scale = Scale::Sweeping;
    }
    if piped_from_network {
        judgement.blast.reversibility = Reversibility::Irreversible;
        judgement.blast.reach = judgement.blast.reach.max(Reach::Machine);
        unknowns.push("runs code fetched from the network".to_string());
    }
    let mut normalizer = Normalizer::new(cwd, roots);
    // A directory a wrapper changes into is not taken to be normal.
    normalizer.cwd_normal = cwd_normal && effective.chdir.is_none();
    // Copy tools name local files as well as `user@host:` remotes, which are kept anyway.
    normalizer.network = (matches!(
        judgement.capability,
        C::NetFetch | C::NetSend | C::ExecRemote
    ) || knowledge::NAMES_HOSTS.contains(&effective.program))
        && !knowledge::NAMES_LOCAL_PATHS.contains(&effective.program);
    // Assignments and redirections out of the plain project are effects no rule for the command
    // names.
    let mut unnamed_effects = !effective.assignments.is_empty();
    // Redirections are reads and writes like any other.
    let mut redirect_signature = Vec::new();
    for redirect in &effective.redirects {
        if !redirect.is_file {
            redirect_signature.push(redirect.op.clone());
            continue;
        }
        let fd = redirect.fd.map(|n| n.to_string()).unwrap_or_default();
        let op = format!("{fd}{}", redirect.op);
        let target = redirect.target.text.as_str();
        if matches!(
            target,
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ) || target.starts_with("/dev/fd/")
            && target.len() <= 10
            && target.chars().skip(8).all(|c| c.is_ascii_digit())
        {
            redirect_signature.push(format!("{op}{target}"));
            continue;
        }
        if target.starts_with("/dev/tcp/") || target.starts_with("/dev/udp/") {
            unnamed_effects = true;
            judgement.capability = C::NetSend;
            judgement.blast.at_least(C::NetSend.default_blast());
            redirect_signature.push(format!("{op}<net:socket>"));
            continue;
        }
        let access = if redirect.op.contains('>') {
            Access::Write
        } else {
            Access::Read
        };
        if access == Access::Write && judgement.capability.is_read_only() {
            judgement.capability = C::FsWriteWorkspace;
            judgement
                .blast
                .at_least(C::FsWriteWorkspace.default_blast());
        }
        if !normalizer.placement(target).is_plain_workspace() {
            unnamed_effects = true;
        }
        judgement.targets.push((redirect.target.clone(), access));
        redirect_signature.push(format!(
            "{op}{}",
            normalizer.arg_of(target, &redirect.target)
        ));
    }
    // Arguments from elsewhere: the paths are unknown, and a writer or deleter of unknown paths
    // is not understood.
    if effective.args_unknown {
        judgement.blast.reach = judgement.blast.reach.max(Reach::Machine);
        judgement.blast.scale = judgement.blast.scale.max(Scale::Many);
        if effective.walked_paths.is_empty() {
            if matches!(
                judgement.capability,
                C::FsDelete | C::FsWriteWorkspace | C::FsWriteOutside
            ) {
                unknowns.push("writes or deletes paths it reads from its input".to_string());
            }
        } else {
            let access = match judgement.capability {
                C::FsDelete => Access::Delete,
                c if c.is_read_only() => Access::Read,
                _ => Access::Write,
            };
            for walked in &effective.walked_paths {
                judgement.targets.push((walked.clone(), access));
            }
            judgement.recursive = true;
        }
    }
    // `$AWS_SECRET_ACCESS_KEY` in an argument puts a secret on the command line.
    if effective
        .args
        .iter()
        .chain(effective.assignments.iter().map(|(_, v)| v))
        // A word written as its plain value holds no `$` (asked of a flag, not searched).
        .any(|w| !w.raw_is_plain() && names_secret_variable(w.raw()))
    {
        judgement.blast.exposure = judgement.blast.exposure.max(Exposure::ReadsSecrets);
        if judgement.capability.is_read_only() || judgement.capability == C::Meta {
            judgement.capability = C::SecretRead;
        }
    }
    // Any argument that names a credential is read, whether or not the tables know the option
    // (`openssl base64 -in ~/.ssh/id_rsa`, `curl -H @~/.aws/credentials`, `git blame .env`).
    for (at, word) in effective.args.iter().enumerate() {
        // A pattern (`grep .env notes.txt`) is matched, not opened.
        if !word.is_literal() || judgement.is_pattern(at) {
            continue;
        }
        let text = word.text.as_str();
        let candidate = text
            .strip_prefix('@')
            .or_else(|| {
                text.strip_prefix("--")
                    .and_then(|rest| rest.split_once('='))
                    .map(|(_, v)| v.trim_start_matches('@'))
            })
            .unwrap_or(text);
        if crate::signature::looks_like_path(candidate)
            && normalizer.placement(candidate).secret
            && !judgement.targets.iter().any(|(w, _)| w.text == candidate)
        {
            judgement
                .targets
                .push((Word::plain(candidate), Access::Read));
        }
    }
    floor_places_in_values(effective, &mut judgement, &mut normalizer);
    let targets = place_targets(&mut judgement, &mut normalizer, &mut unknowns, &mut flags);
    // Placing the targets corrects the judgement but never changes its list of targets: their
    // words are borrowed from it, not copied.
    let target_words: Vec<&str> = judgement
        .targets
        .iter()
        .map(|(w, _)| w.text.as_str())
        .collect();
    let signature = shell_signature(
        effective,
        &judgement,
        &target_words,
        &mut normalizer,
        &redirect_signature,
    );
    let (spelling, spelling_without_flags) = spell(effective, &mut normalizer, &target_words);
    normalizer.reaches.mark(&mut flags);
    let display = redact_text(effective_text(effective));
    let command = shell_words(effective);
    let risky_wrapper = effective.wrappers.iter().any(|w| {
        matches!(
            w,
            Wrapper::Privilege
                | Wrapper::ShellEval
                | Wrapper::StdinArgs
                | Wrapper::FindExec
                | Wrapper::FetchRun
        )
    });
    Action {
        capability: judgement.capability,
        blast: judgement.blast,
        signature,
        display,
        targets,
        understood: unknowns.is_empty(),
        unknowns,
        flags,
        subject: Subject {
            tool: "Bash".to_string(),
            command: Some(command),
            written: Some(owned.written),
            unnamed_effects,
            spelling,
            spelling_without_flags,
            risky_wrapper,
            ..Subject::default()
        },
    }
}

/// `$NAME` or `${NAME…}` where the name says it holds a credential, or `${!NAME}`, whose value
/// is the value of whatever variable NAME names (`for v in ${!GITHUB*}; do echo ${!v}; done`
/// prints every `GITHUB_…` secret).
fn names_secret_variable(raw: &str) -> bool {
    if !crate::shell::holds_byte(raw.as_bytes(), b'$') {
        return false;
    }
    raw.split('$').skip(1).any(|rest| {
        if let Some(indirect) = rest.strip_prefix("{!") {
            let name_end = indirect
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(indirect.len());
            // `${!name}` is indirect; `${!prefix*}`, `${!prefix@}` and `${!array[@]}` list
            // names or keys, which are not values.
            if name_end > 0 && indirect.get(name_end..).is_some_and(|r| r.starts_with('}')) {
                return true;
            }
        }
        let name: String = rest
            .trim_start_matches('{')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<String>()
            .to_ascii_uppercase();
        [
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "API_KEY",
            "APIKEY",
            "ACCESS_KEY",
            "PRIVATE_KEY",
            "CREDENTIAL",
            "AUTH",
            // Passwords by other names (`DB_PASS`, `MYSQL_PWD`, `GPG_PASSPHRASE`) and keys
            // (`STRIPE_KEY`, `SIGNING_KEY`).
            "PASS",
            "_PWD",
            "_KEY",
            // URLs and connection strings that carry a password or a key.
            "DATABASE_URL",
            "DB_URL",
            "_DSN",
            "CONNECTION_STRING",
            "CONN_STR",
            "MONGODB_URI",
            "MONGO_URL",
            "REDIS_URL",
            "AMQP_URL",
            "WEBHOOK",
        ]
        .iter()
        .any(|s| name.contains(s))
    })
}

/// A runner started in a directory outside the project (`git -C ~/x status`, `cd ~/x && npm
/// test`, `env -C`, `pushd`), or in one the engine cannot tell, runs that directory's
/// configuration, hooks, build scripts and tests: code the engine has not read.
fn runs_elsewhere(
    effective: &Effective,
    judgement: &mut Classification,
    cwd: Option<&str>,
    roots: &Roots,
) {
    let runs_project_code = matches!(
        judgement.capability,
        C::ExecTest
            | C::ExecBuild
            | C::ExecPkg
            | C::ExecVcsRead
            | C::ExecVcsWrite
            | C::ExecVcsPublish
            | C::ExecIacPlan
            | C::ExecIac
    );
    if !runs_project_code {
        return;
    }
    let inside = cwd.is_some_and(|dir| paths::in_workspace(dir, roots));
    if inside {
        return;
    }
    let why = match cwd {
        Some(dir) => format!(
            "`{}` runs in `{}`, outside the project, whose configuration, hooks and scripts the engine has not read",
            effective.program,
            redact_text(dir)
        ),
        None => format!(
            "`{}` runs in a directory the engine cannot tell, whose configuration, hooks and scripts it has not read",
            effective.program
        ),
    };
    let taken = std::mem::replace(judgement, Classification::new(C::Meta));
    *judgement = taken.runs_unread(&why).reach(Reach::Machine);
}

/// A program that reads its commands from its standard input (`ed`, `ex`, `vim -e`), fed by a
/// pipe, a here-document or a file: the commands are code the engine has not read (`!cmd`,
/// `w ~/.bashrc`).
fn reads_commands_from_input(effective: &Effective, judgement: &mut Classification) {
    let program = effective.program.as_str();
    let reads_commands = matches!(program, "ed" | "red" | "ex")
        || matches!(program, "vim" | "vi" | "nvim" | "view")
            && effective.args.iter().any(|w| {
                let t = w.text.as_str();
                matches!(t, "-e" | "-E" | "-es" | "-Es")
            });
    if !reads_commands {
        return;
    }
    let fed = effective.surroundings.piped_from.is_some()
        || effective
            .redirects
            .iter()
            .any(|r| r.op.starts_with('<') && r.fd.is_none_or(|fd| fd == 0));
    if fed {
        let taken = std::mem::replace(judgement, Classification::new(C::Meta));
        *judgement = taken.runs_unread(&format!(
            "`{program}` runs editor commands from its input, which can run programs and write any file"
        ));
    }
}

/// A floor place (a startup file, a control file, leastgrant's state) named in an option's or a
/// variable's value is written, whatever the tables know of the option: a runner's
/// `--junitxml=~/.bashrc`, `-o cache_dir=.git/hooks`, `--outputFile=…` after `--`,
/// `COVERAGE_FILE=~/.profile`. The target's placement decides, not the action's capability.
/// Programs whose tables type every word (readers, writers, deleters) are left to the tables.
fn floor_places_in_values(
    effective: &Effective,
    judgement: &mut Classification,
    normalizer: &mut Normalizer<'_>,
) {
    let typed_by_tables = judgement.capability.is_read_only()
        || matches!(
            judgement.capability,
            C::FsWriteWorkspace | C::FsWriteOutside | C::FsDelete | C::SecretRead
        );
    let mut values: Vec<&str> = effective
        .assignments
        .iter()
        .filter(|(_, v)| v.is_literal())
        .map(|(_, v)| v.text.as_str())
        .collect();
    if !typed_by_tables {
        let mut after_option = false;
        for word in &effective.args {
            let text = word.text.as_str();
            let literal = word.is_literal();
            let is_option = text.starts_with('-') && text != "--" && text != "-";
            if literal {
                // (Split only when an option or the word after one: the split is kept only then.)
                let split = if is_option || after_option {
                    text.split_once('=')
                } else {
                    None
                };
                if let Some((_, value)) = split {
                    values.push(value);
                } else if after_option {
                    values.push(text);
                }
            }
            after_option = is_option && !text.contains('=');
        }
    }
    for value in values {
        // `html:PATH` (a report format and where it goes).
        let value = match value.split_once(':') {
            Some((kind, path))
                if !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_alphanumeric()) =>
            {
                path
            }
            _ => value,
        };
        if !crate::signature::looks_like_path(value)
            || judgement.targets.iter().any(|(w, _)| w.text == value)
        {
            continue;
        }
        let placement = normalizer.placement(value);
        if placement.persistence || placement.control || placement.own_state {
            judgement.targets.push((Word::plain(value), Access::Write));
        } else if placement.secret {
            judgement.targets.push((Word::plain(value), Access::Read));
        }
    }
}

/// Builtins that evaluate an array subscript, or arithmetic, in their operands: a literal
/// `a[$(cmd)]` (quoted, so the parser saw no substitution) runs `cmd` (`test -v`, `[[ -v ]]`,
/// `printf -v`, `let`, `unset`, `read`, `declare`).
fn evaluates_subscripts(effective: &Effective) -> bool {
    matches!(
        effective.program.as_str(),
        "test"
            | "["
            | "[["
            | "printf"
            | "let"
            | "unset"
            | "read"
            | "declare"
            | "typeset"
            | "local"
            | "export"
            | "readonly"
            | "(("
    ) && effective
        .args
        .iter()
        .any(|w| w.is_literal() && (w.text.contains("$(") || w.text.contains('`')))
}

/// The effectives, each subscript-evaluating builtin followed by the commands its operands'
/// substitutions run, analysed as shell text of their own.
fn with_subscript_code(effectives: Vec<Effective>) -> Vec<Effective> {
    let mut out = Vec::with_capacity(effectives.len() + 1);
    for effective in effectives {
        let mut inner = Vec::new();
        if evaluates_subscripts(&effective) {
            for word in effective.args.iter().filter(|w| w.is_literal()) {
                for body in substitution_bodies(&word.text) {
                    let script = parse(body, effective.surroundings.depth + 1);
                    let template = Effective {
                        written: effective.written.clone(),
                        ..Effective::default()
                    };
                    let mut commands = script.commands;
                    for command in &mut commands {
                        command.surroundings.isolated = true;
                    }
                    inner.extend(unwrap_script(commands, &template));
                    if !script.problems.is_empty() {
                        let mut opaque = effective.clone();
                        opaque.opaque = Some("code in a subscript that does not parse".to_string());
                        opaque.unread = true;
                        inner.push(opaque);
                    }
                }
            }
        }
        out.push(effective);
        out.extend(inner);
    }
    out
}

/// The bodies of `$(…)` and `` `…` `` in a word's text, outermost first.
fn substitution_bodies(text: &str) -> Vec<&str> {
    let mut bodies = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes.get(i..i + 2) == Some(b"$(") {
            let start = i + 2;
            let mut depth = 1;
            let mut j = start;
            while j < bytes.len() && depth > 0 {
                match bytes.get(j) {
                    Some(b'(') => depth += 1,
                    Some(b')') => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            let end = if depth == 0 { j - 1 } else { bytes.len() };
            if let Some(body) = text.get(start..end) {
                bodies.push(body);
            }
            i = j;
        } else if bytes.get(i) == Some(&b'`') {
            let start = i + 1;
            let end = text
                .get(start..)
                .and_then(|rest| rest.find('`'))
                .map_or(bytes.len(), |at| start + at);
            if let Some(body) = text.get(start..end) {
                bodies.push(body);
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    bodies
}
