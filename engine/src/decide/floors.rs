//! The floors: what an action reaches that no setting, rule of allowance or learned state lifts
//! (leastgrant's own state, credentials, control files, outside the project, …), each with a
//! stable code and a sentence for people; the integrity floor denies, the others ask.

use crate::model::{
    Access, Action, Analysis, Capability as C, Exposure, Reach, Reversibility, Zone,
};

/// Not understood: asks, and autopilot waives it for an action contained in the project.
pub(super) const NOT_UNDERSTOOD: &str = "floor.not-understood";
/// The cloud metadata service, in any spelling (`crate::net`): it hands out credentials.
const METADATA: &str = "floor.metadata";
/// Code the engine cannot read: never waived, whatever the posture or the evidence.
const UNREAD_CODE: &str = "floor.unread-code";

/// A floor an action hits: a stable code, a sentence, and whether it denies outright.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Floor {
    /// `floor.secret`, `floor.self-write`, …
    pub code: &'static str,
    /// For people.
    pub text: String,
    /// The integrity floor: deny, not ask.
    pub deny: bool,
}

/// The floors an action hits.
pub fn floors(action: &Action, analysis: &Analysis) -> Vec<Floor> {
    let mut hits: Vec<(&'static str, String, bool)> = Vec::new();
    let writes = |t: &&crate::model::Target| t.access != Access::Read;
    if let Some(t) = action
        .targets
        .iter()
        .filter(writes)
        .find(|t| t.placement.own_state)
    {
        hits.push((
            "floor.self-write",
            format!("it would change leastgrant's own state{}", link_words(t)),
            true,
        ));
    }
    if let Some(t) = action
        .targets
        .iter()
        .filter(writes)
        .find(|t| t.placement.control && !t.placement.own_state)
    {
        hits.push((
            "floor.control-file",
            format!(
                "it changes `{}`, {}{}",
                t.path,
                crate::paths::control_reason(&t.path)
                    .or_else(|| t.link.as_deref().and_then(crate::paths::control_reason))
                    .unwrap_or("which steers an agent, CI or later commands"),
                link_words(t)
            ),
            false,
        ));
    }
    if action.flags.url_credentials
        && action.capability != C::SecretRead
        && action.blast.exposure != Exposure::ReadsSecrets
        && !action.targets.iter().any(|t| t.placement.secret)
    {
        hits.push((
            "floor.secret",
            "it sends credentials written into a URL".to_string(),
            false,
        ));
    } else if action.capability == C::SecretRead
        || action.blast.exposure == Exposure::ReadsSecrets
        || action.targets.iter().any(|t| t.placement.secret)
    {
        let written = action
            .targets
            .iter()
            .find(|t| t.placement.secret && t.access != Access::Read);
        let verb = if written.is_some() {
            "writes to"
        } else {
            "reads"
        };
        // Through a link, name the link and where it leads.
        let linked = written
            .into_iter()
            .chain(action.targets.iter().filter(|t| t.placement.secret))
            .find(|t| t.link.is_some())
            .map(link_words)
            .unwrap_or_default();
        hits.push((
            "floor.secret",
            format!("it {verb} credentials{linked}"),
            false,
        ));
    }
    if action.blast.exposure == Exposure::CanExfiltrate {
        hits.push((
            "floor.exfiltrate",
            "it can send data off this machine".to_string(),
            false,
        ));
    }
    if !action.capability.is_read_only()
        && let Some(t) = action.targets.iter().find(|t| {
            t.access != Access::Read
                && !matches!(t.placement.zone, Zone::Workspace | Zone::Unresolved)
        })
    {
        hits.push((
            "floor.write-outside",
            format!("it changes files outside the project{}", link_words(t)),
            false,
        ));
    }
    let persistent = action
        .targets
        .iter()
        .find(|t| t.access != Access::Read && t.placement.persistence);
    if action.flags.persistence || persistent.is_some() {
        hits.push((
            "floor.persistence",
            format!(
                "it installs something that runs later without asking{}",
                persistent.map(link_words).unwrap_or_default()
            ),
            false,
        ));
    }
    if action.flags.metadata {
        hits.push((
            METADATA,
            "it reaches the cloud metadata service, which hands out this machine's credentials"
                .to_string(),
            false,
        ));
    }
    let socket = action.targets.iter().find(|t| t.placement.privileged);
    if action.flags.privilege
        || action.capability == C::ExecPrivilege
        || action.flags.container_socket
        || socket.is_some()
    {
        hits.push((
            "floor.privilege",
            match socket {
                Some(t) => format!(
                    "it talks to `{}`, a container runtime's socket, which is root on this machine{}",
                    t.path,
                    link_words(t)
                ),
                None if action.flags.container_socket && !action.flags.privilege => {
                    "it drives a container runtime's API, which is root on this machine".to_string()
                }
                None => "it runs with raised privileges".to_string(),
            },
            false,
        ));
    }
    if action.flags.piped_from_network
        || analysis.piped_from_network
            && matches!(action.capability, C::ExecUnknown | C::ExecInterpreter)
    {
        hits.push((
            "floor.pipe-to-shell",
            "it runs code fetched from the network".to_string(),
            false,
        ));
    }
    if action.flags.fetch_run {
        hits.push((
            "floor.fetch-run",
            "it downloads a package and runs it".to_string(),
            false,
        ));
    }
    if action.blast.reach == Reach::Production {
        hits.push((
            "floor.production",
            "it touches production".to_string(),
            false,
        ));
    }
    if action.capability == C::ExecPkgPublish {
        hits.push((
            "floor.publish",
            "it publishes a package, which cannot be taken back".to_string(),
            false,
        ));
    }
    if action.blast.reversibility == Reversibility::Irreversible
        && action.blast.reach != Reach::Workspace
    {
        hits.push((
            "floor.irreversible",
            "it cannot be undone".to_string(),
            false,
        ));
    }
    if action.flags.unread_code {
        // Its own floor, so no posture waives it as it may waive "not understood".
        let why = action
            .unknowns
            .first()
            .map(String::as_str)
            .unwrap_or("code given to it");
        hits.push((
            UNREAD_CODE,
            format!("it runs code the engine cannot read: {why}"),
            false,
        ));
    } else if !action.understood || !analysis.understood {
        let why = action
            .unknowns
            .first()
            .cloned()
            .or_else(|| analysis.problems.first().cloned())
            .unwrap_or_else(|| "part of the command could not be analysed".to_string());
        hits.push((
            NOT_UNDERSTOOD,
            format!("the engine cannot tell what it does: {why}"),
            false,
        ));
    }
    hits.into_iter()
        .map(|(code, text, deny)| Floor { code, text, deny })
        .collect()
}

/// `: `a` is a link to `b`` for a target reached through a symbolic link, else nothing.
fn link_words(target: &crate::model::Target) -> String {
    match &target.link {
        Some(link) => format!(": `{}` is a link to `{link}`", target.path),
        None => String::new(),
    }
}
