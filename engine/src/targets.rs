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
        // What the shell expands a glob word to: each brace alternative resolved on its own.
        let mut expanded: Vec<Option<String>> = Vec::new();
        if word.glob {
            for alternative in crate::glob::expand_braces(&word.text) {
                let (alt_resolved, alt) = normalizer.place(&alternative);
                placement.widen(&alt);
                if let Some(glob) = alt_resolved.as_deref().filter(|a| is_glob(a)) {
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
                expanded.push(alt_resolved);
            }
        }
        // A walk that follows links reaches where the links below its directory lead
        // (`grep -R TODO docs` with `docs/keys -> ~/.ssh`): the caller lists them, bounded.
        if judgement.follows_links
            && let Some(dir) = resolved
        {
            match roots.links.below(dir) {
                Some(targets) => {
                    for target in targets {
                        placement.widen(&normalizer.place(&target).1);
                    }
                }
                None => unknowns.push(format!(
                    "`{}` is walked following symbolic links, more than the engine could look at",
                    redact_text(word.raw())
                )),
            }
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
