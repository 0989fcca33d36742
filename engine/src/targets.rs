//! Where an action's paths lie, and what that says about it: every path target resolved and
//! placed (brace alternatives and globs included), the capability and blast radius corrected by
//! where the paths lie, and the placeholder a structured tool's path argument learns under.
//! Shared by the shell analysis and the structured tools; must not classify programs itself.

use crate::glob::is_glob;
use crate::knowledge::Classification;
use crate::model::{
    Access, ActionFlags, Capability as C, Exposure, Reach, Reversibility, Scale, Target, Zone,
};
use crate::paths::{self, Roots, place, resolve};
use crate::signature::{Normalizer, path_placeholder, redact_text};

/// Resolves and places every path target, and corrects the capability by where they lie.
pub(crate) fn place_targets(
    judgement: &mut Classification,
    normalizer: &mut Normalizer<'_>,
    unknowns: &mut Vec<String>,
    flags: &mut ActionFlags,
) -> Vec<Target> {
    let roots = normalizer.roots();
    let mut targets = Vec::new();
    for (word, access) in &judgement.targets {
        if matches!(
            word.text.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "-"
        ) {
            // Sinks and standard streams are not files anyone cares about.
            continue;
        }
        // The resolved path is the target's path: copied once out of the cache, and borrowed
        // from there.
        let (resolved_path, mut placement) = normalizer.place(&word.text);
        let is_resolved = resolved_path.is_some();
        let path = resolved_path.unwrap_or_else(|| word.raw().to_string());
        let resolved: Option<&str> = is_resolved.then_some(path.as_str());
        let link = resolved.and_then(|r| paths::link_target(r, roots));
        // A walk past what the caller may look at could lead anywhere: the target is then
        // placed nowhere (not in the project, so no posture waives it as contained).
        let mut walk_unknown = false;
        let walked =
            judgement.follows_links || judgement.writes_through_links && *access == Access::Write;
        // What the shell expands a glob word to: each brace alternative resolved on its own.
        let mut expanded: Vec<Option<String>> = Vec::new();
        if word.glob {
            for alternative in crate::glob::expand_braces(&word.text) {
                let (alt_resolved, alt) = normalizer.place(&alternative);
                placement.widen(&alt);
                if let Some(glob) = alt_resolved.as_deref().filter(|a| is_glob(a)) {
                    // What it names on the caller's disk, each path placed where its links lead
                    // (`cat docs/*.md` with `docs/notes.md -> ~/.aws/credentials`). Names that
                    // are all in the project settle it; otherwise, or when nothing matches (the
                    // shell passes the word as written) or the caller cannot tell, the text's
                    // answer stands too.
                    let on_disk = if judgement.program_globs {
                        None
                    } else {
                        roots.links.expand_glob(glob)
                    };
                    let by_text = match on_disk {
                        Some(paths) if !paths.is_empty() => {
                            let mut inside = true;
                            for path in &paths {
                                let at = normalizer.place(path).1;
                                inside &= at.zone == Zone::Workspace;
                                placement.widen(&at);
                                if walked {
                                    walk_unknown |= !widen_by_links_below(
                                        path,
                                        word,
                                        &mut placement,
                                        normalizer,
                                        unknowns,
                                    );
                                }
                            }
                            !inside
                        }
                        // Nothing matches, or the caller cannot tell (`**`, a crowd): the
                        // text's answer, which does not see links (`docs/decisions.md`).
                        _ => true,
                    };
                    if by_text {
                        // The glob as written, and where the links on its way lead.
                        let through_link = paths::link_target(glob, roots);
                        for glob in std::iter::once(glob).chain(through_link.as_deref()) {
                            let (secret, persistence, control) =
                                paths::glob_may_reach(&glob.to_ascii_lowercase());
                            placement.secret |= secret && *access != Access::Write;
                            placement.persistence |= persistence;
                            placement.control |= control;
                        }
                    }
                }
                expanded.push(alt_resolved);
            }
        }
        // A walk that follows links reaches where the links below its directory lead
        // (`grep -R TODO docs` with `docs/keys -> ~/.ssh`), a write through links writes there
        // (`chmod -RL`, `cp -r src build` with `build/src/main.py -> ~/.bashrc`): the caller
        // lists them, bounded. A copy's destination is walked where the copy lands (below).
        let copy_into = judgement.copies_into && *access == Access::Write;
        let lands_into = !judgement.lands.is_empty() && *access == Access::Write;
        if walked
            && !copy_into
            && !lands_into
            && let Some(dir) = resolved
        {
            walk_unknown |= !widen_by_links_below(dir, word, &mut placement, normalizer, unknowns);
        }
        // A copy into a directory writes each source's name there, through a link if that is
        // one (`cp setup.md docs` with `docs/setup.md -> ~/.bashrc`), and a copy that writes
        // through links writes through those below the name (`docs/` as a source: below the
        // directory itself). Only a caller that sees links can tell; by its text the name lies
        // where the directory does.
        if (copy_into || lands_into)
            && roots.links.sees()
            && let Some(dir) = resolved
        {
            let through = judgement.writes_through_links;
            // With no source it knows of (a remote one), the directory itself.
            let mut walk_dir =
                copy_into && !judgement.targets.iter().any(|(_, a)| *a == Access::Read);
            // The names a program picks itself (`curl -O`, `wget`, `scp host:f dir`): each
            // placed there, a glob of them as the caller's disk expands it (`*`: every entry),
            // and a recursive write also through the links below each.
            for name in &judgement.lands {
                let landing = paths::join(dir, name);
                let named = if is_glob(name) {
                    if is_glob(dir) {
                        None
                    } else {
                        roots.links.expand_glob(&landing)
                    }
                } else {
                    Some(vec![landing])
                };
                let Some(named) = named else {
                    unknowns.push(format!(
                        "`{}` receives files under names the engine cannot list",
                        redact_text(word.raw())
                    ));
                    walk_unknown = true;
                    continue;
                };
                for landing in &named {
                    placement.widen(&normalizer.place(landing).1);
                    if through {
                        walk_unknown |= !widen_by_links_below(
                            landing,
                            word,
                            &mut placement,
                            normalizer,
                            unknowns,
                        );
                    }
                }
            }
            let sources = judgement
                .targets
                .iter()
                .filter(|(_, a)| copy_into && *a == Access::Read);
            for (source, _) in sources {
                let name = source.text.trim_end_matches('/');
                let name = name.rsplit('/').next().unwrap_or(name);
                if source.glob || source.text.ends_with('/') || matches!(name, "" | "." | "..") {
                    // The sources' contents land in the directory itself, or names the engine
                    // does not list (a glob's).
                    walk_dir = true;
                    continue;
                }
                let landing = paths::join(dir, name);
                placement.widen(&normalizer.place(&landing).1);
                if through {
                    walk_unknown |=
                        !widen_by_links_below(&landing, word, &mut placement, normalizer, unknowns);
                }
            }
            if walk_dir {
                walk_unknown |=
                    !widen_by_links_below(dir, word, &mut placement, normalizer, unknowns);
            }
        }
        if walk_unknown {
            placement.zone = Zone::Unresolved;
        }
        // A write that reaches leastgrant's state without naming it: a recursive copy or delete
        // of a directory above it, or a glob that could expand into it.
        if *access != Access::Read {
            let reaches_below = judgement.recursive || *access == Access::Delete || word.glob;
            let above = resolved
                .into_iter()
                .chain(expanded.iter().flatten().map(String::as_str))
                .chain(link.as_deref())
                .any(|r| roots.contains_own_state(r));
            let glob_into = expanded
                .iter()
                .flatten()
                .any(|r| is_glob(r) && glob_reaches_own_state(r, roots));
            if reaches_below && above || glob_into {
                placement.own_state = true;
            }
        }
        if word.glob && placement.zone != Zone::Workspace {
            judgement.blast.scale = judgement.blast.scale.max(Scale::Many);
        }
        match placement.zone {
            // The walk said why already.
            Zone::Unresolved if walk_unknown => {}
            Zone::Unresolved => unknowns.push(format!(
                "`{}` is a path the engine cannot resolve",
                redact_text(word.raw())
            )),
            Zone::Workspace => {}
            _ => {
                judgement.blast.reach = judgement.blast.reach.max(Reach::Machine);
                match access {
                    Access::Read => {
                        if judgement.capability == C::FsReadWorkspace {
                            judgement.capability = C::FsReadOutside;
                        }
                    }
                    Access::Write | Access::Delete => {
                        // Local work that lands outside the project is an outside write, whatever
                        // tool does it (`gcc -o /usr/local/bin/x`, `curl -o ~/.bashrc`).
                        if matches!(
                            judgement.capability,
                            C::FsWriteWorkspace
                                | C::FsReadWorkspace
                                | C::FsReadOutside
                                | C::ExecBuild
                                | C::ExecTest
                                | C::ExecInspect
                                | C::ExecVcsRead
                                | C::ExecVcsWrite
                                | C::NetFetch
                                | C::Meta
                        ) && *access == Access::Write
                        {
                            judgement.capability = C::FsWriteOutside;
                        }
                        judgement.blast.reversibility =
                            judgement.blast.reversibility.max(Reversibility::Hard);
                    }
                    Access::Execute => {
                        unknowns.push("runs code from outside the project".to_string())
                    }
                }
            }
        }
        let sweeps_secrets = judgement.recursive
            && *access == Access::Read
            && resolved.is_some_and(|r| paths::sweeps_secrets(r, roots));
        if placement.secret || sweeps_secrets {
            judgement.blast.exposure = judgement.blast.exposure.max(Exposure::ReadsSecrets);
            if judgement.capability.is_read_only()
                || judgement.capability == C::FsWriteWorkspace && *access == Access::Read
            {
                judgement.capability = C::SecretRead;
                judgement.blast.reach = judgement.blast.reach.max(Reach::Machine);
            }
        }
        if placement.persistence && *access != Access::Read {
            flags.persistence = true;
        }
        targets.push(Target {
            recursive: judgement.recursive,
            path,
            link,
            glob: word.glob,
            access: *access,
            placement,
        });
    }
    targets
}

/// Widens `placement` (of `word`, resolved to directory `dir`) by where the links below `dir`
/// lead, as the caller's resolver lists them; past what it may look at, says why in `unknowns`
/// and returns false.
fn widen_by_links_below(
    dir: &str,
    word: &crate::shell::lex::Word,
    placement: &mut crate::model::Placement,
    normalizer: &mut Normalizer<'_>,
    unknowns: &mut Vec<String>,
) -> bool {
    match normalizer.roots().links.below(dir) {
        Some(targets) => {
            for target in targets {
                placement.widen(&normalizer.place(&target).1);
            }
            true
        }
        None => {
            unknowns.push(format!(
                "`{}` is walked following symbolic links, more than the engine could look at",
                redact_text(word.raw())
            ));
            false
        }
    }
}

/// A shell glob that could expand to a path in leastgrant's own state.
fn glob_reaches_own_state(glob: &str, roots: &Roots) -> bool {
    crate::glob::glob_may_reach_dir(glob, &roots.state_dir)
        || crate::glob::glob_may_reach_dir(glob, &paths::join(&roots.project, ".leastgrant"))
}

/// The placeholder for a structured tool's path argument.
pub(crate) fn path_signature(raw: &str, cwd: Option<&str>, roots: &Roots) -> String {
    let resolved = resolve(raw, cwd, roots);
    path_placeholder(&place(resolved.as_deref(), roots)).to_string()
}
