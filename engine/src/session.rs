//! What a session has done that makes a later call in it riskier: a credential read followed by
//! a network send, a publish or an MCP call; fetched code followed by code nobody has read. The
//! replay keeps one per simulated session, the hook one per live session.

use crate::model::{Action, Analysis, Capability};

/// Session-scoped facts that turn an allow into an ask: a credential read followed by a
/// network send, a publish or an MCP call; fetched code followed by unknown code.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionState {
    /// Secrets were read in this session.
    pub read_secrets: bool,
    /// Files outside the project were read.
    pub read_outside: bool,
    /// Something talked to the network.
    pub network_egress: bool,
    /// Packages were installed (code fetched).
    pub fetched_code: bool,
    /// The last action's capability.
    pub last_capability: Option<Capability>,
    /// Actions so far in the session.
    pub actions: u32,
}

impl SessionState {
    /// Updates the session with an event that ran.
    pub fn record(&mut self, analysis: &Analysis) {
        for action in &analysis.actions {
            match action.capability {
                Capability::SecretRead => self.read_secrets = true,
                Capability::FsReadOutside => self.read_outside = true,
                Capability::NetFetch | Capability::NetSend => self.network_egress = true,
                Capability::ExecPkg => self.fetched_code = true,
                _ => {}
            }
            if action.blast.exposure == crate::model::Exposure::ReadsSecrets {
                self.read_secrets = true;
            }
            self.last_capability = Some(action.capability);
            self.actions = self.actions.saturating_add(1);
        }
    }

    /// The concern an action raises given this session's history, if any.
    pub fn concern(&self, action: &Action) -> Option<&'static str> {
        use Capability as C;
        match action.capability {
            C::NetSend | C::NetFetch if self.read_secrets => {
                Some("secrets were read earlier in this session, and this talks to the network")
            }
            C::ExecVcsPublish | C::ExecPkgPublish if self.read_secrets => {
                Some("secrets were read earlier in this session, and this publishes")
            }
            C::McpCall if self.read_secrets => {
                Some("secrets were read earlier in this session, and this calls an MCP server")
            }
            C::ExecUnknown | C::ExecInterpreter if self.fetched_code => Some(
                "packages were installed earlier in this session, and this runs code the engine has not read",
            ),
            _ => None,
        }
    }
}
