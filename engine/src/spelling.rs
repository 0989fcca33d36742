//! The texts of a shell action: what a person is shown (`display`), what `Bash(…)` rules match
//! (the words as written, quoted), what a grant remembers (the spelling, flags sorted and paths
//! resolved) and what learning is keyed on (the signature, arguments as placeholders).

use std::borrow::Cow;

use crate::knowledge::Classification;
use crate::shell::quote::{push_quoted, push_text, push_word};
use crate::shell::script::{Effective, Wrapper};
use crate::shell::unwrap::trusted_program_path;
use crate::signature::precision::{
    Operands, display_config_key, precision, program_family, sed_prints_only, single_dash_words,
};
use crate::signature::{Normalizer, looks_like_path, path_placeholder};

/// The action spelled for grants: the program as written, sorted flags, then the arguments with
/// every path the action touches resolved (so `rm -rf ./src/` and `rm -fr src` are one
/// spelling), and the same without flags.
pub(crate) fn spell(
    effective: &Effective,
    normalizer: &mut Normalizer<'_>,
    target_words: &[&str],
) -> (String, String) {
    let program = if effective.program_path.is_empty() {
        &effective.program
    } else {
        &effective.program_path
    };
    let mut flags: Vec<&str> = Vec::new();
    // Both spellings share the positionals: built once, straight into the spelling without
    // flags (the program, then the positionals), and copied from there into the other (no
    // separate text of the positionals to allocate and copy twice).
    let mut without = String::with_capacity(
        program.len()
            + effective
                .args
                .iter()
                .map(|w| w.text.len() + 1)
                .sum::<usize>(),
    );
    without.push_str(program);
    for word in &effective.args {
        let text = word.text.as_str();
        if text.starts_with('-') && text.len() > 1 && word.is_literal() {
            if is_letter_cluster(text) && !single_dash_words(&effective.program) {
                flags.extend(text.chars().skip(1).map(|c| -> &str { short_flag(c) }));
            } else {
                flags.push(text);
            }
        } else {
            without.push(' ');
            // Whether the word is literal asked once (a byte search of the word), not again
            // by `push_word`.
            if !word.is_literal() {
                without.push(crate::shell::UNRESOLVED);
            } else if target_words.contains(&text) {
                match normalizer.resolved(text) {
                    Some(resolved) => without.push_str(resolved),
                    None => without.push_str(text),
                }
            } else {
                push_text(&mut without, &word.text);
            }
        }
    }
    flags.sort_unstable();
    flags.dedup();
    let positionals = without.get(program.len()..).unwrap_or("");
    let mut with = String::with_capacity(
        program.len() + flags.iter().map(|f| f.len() + 1).sum::<usize>() + positionals.len(),
    );
    with.push_str(program);
    for flag in flags {
        with.push(' ');
        with.push_str(flag);
    }
    with.push_str(positionals);
    (with, without)
}

/// The program as written and its arguments, quoted where the shell would need it: what
/// `Bash(…)` rules are matched against.
pub(crate) fn shell_words(effective: &Effective) -> String {
    if effective.written_is_words {
        return effective.written.clone();
    }
    let program = if effective.program_path.is_empty() {
        &effective.program
    } else {
        &effective.program_path
    };
    let mut out = String::with_capacity(effective.written.len() + 8);
    push_quoted(&mut out, program, true);
    for word in &effective.args {
        out.push(' ');
        push_word(&mut out, word);
    }
    out
}

pub(crate) fn effective_text(effective: &Effective) -> String {
    // Built in place: this runs for every command, and a `Vec` of copies to join cost more
    // than the text itself.
    fn word(part: &str, text: &mut String) {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(part);
    }
    let mut text = String::with_capacity(
        effective.written.len()
            + effective
                .assignments
                .iter()
                .map(|(name, value)| name.len() + value.raw().len() + 2)
                .sum::<usize>()
            + effective
                .redirects
                .iter()
                .map(|r| r.op.len() + r.target.raw().len() + 1)
                .sum::<usize>(),
    );
    for (name, value) in &effective.assignments {
        word(name, &mut text);
        text.push('=');
        text.push_str(value.raw());
    }
    if !effective.program.is_empty() {
        let program = if effective.program_path.is_empty() {
            &effective.program
        } else {
            &effective.program_path
        };
        word(program, &mut text);
    }
    for arg in &effective.args {
        word(arg.raw(), &mut text);
    }
    for redirect in &effective.redirects {
        word(&redirect.op, &mut text);
        if !(redirect.op.starts_with("<<") && redirect.op != "<<<") {
            text.push_str(redirect.target.raw());
        }
    }
    text
}

/// `-c` for a letter of a flag cluster, without allocating (it runs for every letter of every
/// cluster; [`is_letter_cluster`] admits only ASCII letters).
fn short_flag(letter: char) -> &'static str {
    const FLAGS: &str = "-a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z\
                         -A-B-C-D-E-F-G-H-I-J-K-L-M-N-O-P-Q-R-S-T-U-V-W-X-Y-Z";
    let at = match letter {
        'a'..='z' => letter as usize - 'a' as usize,
        'A'..='Z' => 26 + letter as usize - 'A' as usize,
        _ => return "-?",
    };
    FLAGS.get(2 * at..2 * at + 2).unwrap_or("-?")
}

/// Program, normalised positionals in order, sorted flags, then risk-bearing context.
///
/// What is abstracted (see `signature/precision.rs` and docs/decisions.md): the display flags,
/// counts, line ranges, search patterns and test selectors the program's row lists, `git -c`
/// keys that only change how output looks, and — in an action that only reads or runs the
/// project's tests — a path in the plain project (`<path>`, which the capability already says).
/// Everything else stays: every other flag, every path placed anywhere else, redirections,
/// assignments, wrappers and the program.
pub(crate) fn shell_signature<'e>(
    effective: &'e Effective,
    judgement: &Classification,
    target_words: &[&str],
    normalizer: &mut Normalizer<'_>,
    redirects: &[String],
) -> String {
    // Sized for a part per word, assignment and wrapper and a few of context: grown, it was
    // copied two or three times per signature.
    let mut parts: Vec<Cow<'e, str>> = Vec::with_capacity(
        effective.args.len() + effective.assignments.len() + effective.wrappers.len() + 4,
    );
    let mut assignments: Vec<String> = effective
        .assignments
        .iter()
        .map(|(name, value)| normalizer.assignment(name, &value.text))
        .collect();
    assignments.sort();
    parts.extend(assignments.into_iter().map(Cow::Owned));
    for wrapper in &effective.wrappers {
        match wrapper {
            Wrapper::Privilege => parts.push(Cow::Borrowed("[privileged]")),
            Wrapper::StdinArgs => parts.push(Cow::Borrowed("[args-from-input]")),
            Wrapper::FindExec => parts.push(Cow::Borrowed("[find-exec]")),
            Wrapper::FetchRun => parts.push(Cow::Borrowed("[fetch-run]")),
            _ => {}
        }
    }
    if effective.chdir.is_some() {
        let dir = effective
            .chdir
            .as_ref()
            .map(|d| normalizer.arg_of(&d.text, d))
            .unwrap_or_default();
        parts.push(Cow::Owned(format!("[in:{dir}]")));
    }
    if let Some(runner) = &effective.runner {
        parts.push(Cow::Owned(format!("[via:{runner}]")));
    }
    let program = effective.program.as_str();
    if crate::shell::holds_unresolved(program) {
        parts.push(Cow::Borrowed("<dynamic>"));
    } else if crate::shell::holds_byte(effective.program_path.as_bytes(), b'/')
        && !trusted_program_path(&effective.program_path)
    {
        // A file named by its path is that file, not the program its name resembles.
        parts.push(Cow::Borrowed(effective.program_path.as_str()));
    } else if !program.is_empty() {
        parts.push(Cow::Borrowed(program_family(program)));
    }
    for key in &effective.config_keys {
        if !display_config_key(key) {
            parts.push(Cow::Owned(format!("-c {key}")));
        }
    }
    // The row of the precision table: the program's, a subcommand's (`git log`, `cargo test`),
    // or a `python -m` module's, whose two words stay as they are.
    let first = effective.args.first().map_or("", |w| w.text.as_str());
    let (subject, sub_at, skip) = if program_family(program) == "python" && first == "-m" {
        let module = effective.args.get(1).map_or("", |w| w.text.as_str());
        (module, None, 2)
    } else if matches!(program, "git" | "cargo" | "npm" | "pnpm" | "yarn")
        && !first.starts_with('-')
    {
        (program, Some(0), 0)
    } else {
        (program, None, 0)
    };
    let sub = sub_at.map_or("", |_| first);
    let precision = if crate::shell::holds_byte(effective.program_path.as_bytes(), b'/')
        && !trusted_program_path(&effective.program_path)
    {
        None
    } else {
        precision(subject, sub)
    };
    // A plain project path says nothing the capability does not, in an action that only reads
    // or runs the project's own tests: `cat README.md` and `cat src/main.py` are one operation.
    let drops_plain_paths = judgement.capability.is_read_only()
        || judgement.capability == crate::model::Capability::ExecTest;
    let clusters = !single_dash_words(program);
    let mut flags: Vec<Cow<'e, str>> = Vec::new();
    let mut after_dashes = false;
    let mut skip_value = false;
    let mut operand_seen = false;
    // Where the last in-project `<path>` operand was.
    let mut path_operand_at: Option<usize> = None;
    for (at, word) in effective.args.iter().enumerate() {
        let text = word.text.as_str();
        if skip_value {
            skip_value = false;
            continue;
        }
        if at < skip {
            // `python -m pytest`: the interpreter's own words, as ever.
            if text.starts_with('-') {
                flags.push(Cow::Borrowed(text));
            } else {
                parts.push(normalizer.arg_of(text, word));
            }
            continue;
        }
        if judgement.is_pattern(at) {
            // One `<pattern>` for `-e TODO -e FIXME`: more patterns are still one search.
            if parts.last().is_none_or(|p| p != "<pattern>") {
                parts.push(Cow::Borrowed("<pattern>"));
            }
            continue;
        }
        if !after_dashes && text == "--" {
            after_dashes = true;
            continue;
        }
        if after_dashes
            && text.starts_with('-')
            && word.is_literal()
            && precision
                .as_ref()
                .is_some_and(|p| p.drops_after_dashes(text))
        {
            continue;
        }
        let is_flag = !after_dashes && text.starts_with('-') && text.len() > 1;
        // The cheap tests first: whether a word is literal is a byte search of it.
        if is_flag
            && let Some(p) = &precision
            && word.is_literal()
        {
            let next = effective.args.get(at + 1).map(|w| w.text.as_str());
            if p.turns_plugin_off(text, next) {
                skip_value = text == "-p";
                continue;
            }
            if p.drops_flag(text) {
                continue;
            }
            if p.drops_value_after(text) {
                skip_value = true;
                continue;
            }
        }
        if is_flag {
            match text.split_once('=') {
                Some((flag, value)) => flags.push(Cow::Owned(format!(
                    "{flag}={}",
                    normalizer.arg_of(value, word)
                ))),
                None if clusters && is_letter_cluster(text) => {
                    // `-la` and `-al` and `-a -l` are one spelling; a display letter goes.
                    for letter in text.chars().skip(1) {
                        let flag = short_flag(letter);
                        if !precision.as_ref().is_some_and(|p| p.drops_letter(flag)) {
                            flags.push(Cow::Borrowed(flag));
                        }
                    }
                }
                None => flags.push(Cow::Borrowed(match crate::tokens::redact_token(text) {
                    Some(marker) => marker,
                    None if !word.is_literal() => "<dynamic>",
                    None => text,
                })),
            }
            continue;
        }
        let is_sub = sub_at == Some(at);
        let operands = match &precision {
            Some(p) if !is_sub && !after_dashes && word.is_literal() => p.operands,
            _ => Operands::Normal,
        };
        let first_operand = !operand_seen && !is_sub;
        if !is_sub {
            operand_seen = true;
        }
        let part = match operands {
            Operands::Text => Some(Cow::Borrowed("<text>")),
            Operands::Topic if !looks_like_path(text) => {
                (!text.bytes().all(|b| b.is_ascii_digit())).then_some(Cow::Borrowed("<topic>"))
            }
            Operands::SedScript
                if first_operand
                    && !effective
                        .args
                        .iter()
                        .any(|w| matches!(w.text.as_str(), "-e" | "--expression" | "-f"))
                    && sed_prints_only(text) =>
            {
                Some(Cow::Borrowed("<range>"))
            }
            Operands::AwkProgram
                if first_operand
                    && !effective.args.iter().any(|w| {
                        matches!(
                            w.text.as_str(),
                            "-f" | "--file"
                                | "-e"
                                | "--source"
                                | "-i"
                                | "--include"
                                | "-E"
                                | "--exec"
                        )
                    })
                    && crate::signature::precision::awk_reads_only(text) =>
            {
                Some(Cow::Borrowed("<text>"))
            }
            Operands::Selector => {
                // A selector is a path or a name inside what the runner already runs.
                let placement = normalizer.placement(text);
                Some(Cow::Borrowed(path_placeholder(&placement)))
            }
            _ => {
                let part = normalizer.arg_of(text, word);
                // A word the program opens is a path even without a path's look (`ls src`,
                // `mkdir build`); a word already typed (`HEAD:.env`, a URL) keeps its type.
                if part == text
                    && target_words.contains(&text)
                    && text.is_ascii()
                    && word.is_literal()
                {
                    Some(Cow::Borrowed(path_placeholder(&normalizer.placement(text))))
                } else {
                    Some(part)
                }
            }
        };
        let Some(mut part) = part else { continue };
        // (A text that needs no quotes holds none of these: asked of its flag first.)
        if part == "<path>"
            && !word.text.is_plain()
            && text.bytes().any(|b| matches!(b, b'*' | b'?' | b'[' | b'{'))
        {
            // A glob is many paths, which the learned single path does not vouch for.
            part = Cow::Borrowed("<glob>");
        }
        if drops_plain_paths && part == "<path>" && !is_sub && text.is_ascii() {
            // (A name with characters outside ASCII may be a look-alike of another name, so it
            // stays: `cat ․env` is not `cat README.md`.)
            continue;
        }
        // One `<text>` or `<topic>` however many words, and one `<path>` however many paths
        // inside the project side by side (`git add a.py b.py` reaches what `git add a.py`
        // does; every other placement stays one placeholder a path).
        // (Only operands side by side: a path after a flag is the flag's, `find . -fls out`.)
        let side_by_side = at
            .checked_sub(1)
            .is_some_and(|p| path_operand_at == Some(p));
        // A path right after a flag may be the flag's value (`make -f a.mk b.mk`): it is not an
        // operand another can join.
        let after_flag = at
            .checked_sub(1)
            .and_then(|p| effective.args.get(p))
            .is_some_and(|w| !after_dashes && w.text.starts_with('-') && w.text.len() > 1);
        path_operand_at = (part == "<path>" && !after_flag).then_some(at);
        if matches!(part.as_ref(), "<text>" | "<topic>") && parts.last() == Some(&part)
            || part == "<path>" && side_by_side && parts.last() == Some(&part)
        {
            continue;
        }
        parts.push(part);
    }
    flags.sort_unstable();
    flags.dedup();
    let mut redirects: Vec<&String> = redirects.iter().collect();
    redirects.sort_unstable();
    // The parts, then the flags, then the redirections, joined with spaces: sized once for
    // all of them (joined first and then grown, the text was copied again for the flags).
    let all = || {
        parts
            .iter()
            .map(|p| p.as_ref())
            .chain(flags.iter().map(|f| f.as_ref()))
            .chain(redirects.iter().map(|r| r.as_str()))
    };
    let count = parts.len() + flags.len() + redirects.len();
    let mut signature =
        String::with_capacity(all().map(str::len).sum::<usize>() + count.saturating_sub(1));
    for (i, part) in all().enumerate() {
        if i > 0 {
            signature.push(' ');
        }
        signature.push_str(part);
    }
    signature
}

/// A cluster of short flags (`-la`, `-rf`, `-xzf`). Longer single-dash words are options of
/// their own (`-name`, `-exec`), and so are a few short ones that are words.
fn is_letter_cluster(text: &str) -> bool {
    (3..=4).contains(&text.len())
        && text.starts_with('-')
        && !text.starts_with("--")
        && text.chars().skip(1).all(|c| c.is_ascii_alphabetic())
        && !matches!(
            text,
            "-run"
                | "-cp"
                | "-jar"
                | "-ok"
                | "-os"
                | "-mod"
                | "-tag"
                | "-vet"
                | "-and"
                | "-not"
                | "-new"
        )
}
