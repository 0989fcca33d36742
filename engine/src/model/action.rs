//! The vocabulary of a classified action: capability, blast radius, tier, and targets with
//! where they lie.
//!
//! One meaning per name, everywhere: these types are what the replay counts, the hook reports
//! and the envelope is keyed on.

use std::fmt;

/// What kind of thing an action is. The string forms are stable: they appear in the events
/// classified by the replay, in `check --json` and in learned envelopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)] // each variant's meaning is its string form, listed in `as_str`
pub enum Capability {
    FsReadWorkspace,
    FsReadOutside,
    FsWriteWorkspace,
    FsWriteOutside,
    FsDelete,
    SecretRead,
    ExecInspect,
    ExecBuild,
    ExecTest,
    ExecPkg,
    ExecPkgPublish,
    ExecVcsRead,
    ExecVcsWrite,
    ExecVcsPublish,
    ExecContainerRead,
    ExecContainer,
    ExecCloudRead,
    ExecCloud,
    ExecIacPlan,
    ExecIac,
    ExecDbRead,
    ExecDb,
    ExecProcess,
    ExecPrivilege,
    ExecRemote,
    ExecInterpreter,
    ExecUnknown,
    NetFetch,
    NetSend,
    McpCall,
    AgentSpawn,
    Meta,
}

impl Capability {
    /// Every capability, in declaration order.
    pub const ALL: [Capability; 32] = [
        Capability::FsReadWorkspace,
        Capability::FsReadOutside,
        Capability::FsWriteWorkspace,
        Capability::FsWriteOutside,
        Capability::FsDelete,
        Capability::SecretRead,
        Capability::ExecInspect,
        Capability::ExecBuild,
        Capability::ExecTest,
        Capability::ExecPkg,
        Capability::ExecPkgPublish,
        Capability::ExecVcsRead,
        Capability::ExecVcsWrite,
        Capability::ExecVcsPublish,
        Capability::ExecContainerRead,
        Capability::ExecContainer,
        Capability::ExecCloudRead,
        Capability::ExecCloud,
        Capability::ExecIacPlan,
        Capability::ExecIac,
        Capability::ExecDbRead,
        Capability::ExecDb,
        Capability::ExecProcess,
        Capability::ExecPrivilege,
        Capability::ExecRemote,
        Capability::ExecInterpreter,
        Capability::ExecUnknown,
        Capability::NetFetch,
        Capability::NetSend,
        Capability::McpCall,
        Capability::AgentSpawn,
        Capability::Meta,
    ];

    /// The stable dotted name.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::FsReadWorkspace => "fs.read.workspace",
            Capability::FsReadOutside => "fs.read.outside",
            Capability::FsWriteWorkspace => "fs.write.workspace",
            Capability::FsWriteOutside => "fs.write.outside",
            Capability::FsDelete => "fs.delete",
            Capability::SecretRead => "secret.read",
            Capability::ExecInspect => "exec.inspect",
            Capability::ExecBuild => "exec.build",
            Capability::ExecTest => "exec.test",
            Capability::ExecPkg => "exec.pkg",
            Capability::ExecPkgPublish => "exec.pkg.publish",
            Capability::ExecVcsRead => "exec.vcs.read",
            Capability::ExecVcsWrite => "exec.vcs.write",
            Capability::ExecVcsPublish => "exec.vcs.publish",
            Capability::ExecContainerRead => "exec.container.read",
            Capability::ExecContainer => "exec.container",
            Capability::ExecCloudRead => "exec.cloud.read",
            Capability::ExecCloud => "exec.cloud",
            Capability::ExecIacPlan => "exec.iac.plan",
            Capability::ExecIac => "exec.iac",
            Capability::ExecDbRead => "exec.db.read",
            Capability::ExecDb => "exec.db",
            Capability::ExecProcess => "exec.process",
            Capability::ExecPrivilege => "exec.privilege",
            Capability::ExecRemote => "exec.remote",
            Capability::ExecInterpreter => "exec.interpreter",
            Capability::ExecUnknown => "exec.unknown",
            Capability::NetFetch => "net.fetch",
            Capability::NetSend => "net.send",
            Capability::McpCall => "mcp.call",
            Capability::AgentSpawn => "agent.spawn",
            Capability::Meta => "meta",
        }
    }

    /// Parses the dotted name.
    pub fn parse(name: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Read-only capabilities change nothing anywhere.
    pub fn is_read_only(self) -> bool {
        matches!(
            self,
            Capability::FsReadWorkspace
                | Capability::FsReadOutside
                | Capability::ExecInspect
                | Capability::ExecVcsRead
                | Capability::ExecContainerRead
                | Capability::ExecCloudRead
                | Capability::ExecIacPlan
                | Capability::ExecDbRead
                | Capability::Meta
        )
    }

    /// The blast radius an action of this capability has unless the knowledge says otherwise.
    pub fn default_blast(self) -> Blast {
        use Exposure as E;
        use Reach as R;
        use Reversibility as V;
        use Scale as S;
        let (reach, reversibility, exposure, scale) = match self {
            Capability::FsReadWorkspace => (R::Workspace, V::Trivial, E::None, S::Single),
            Capability::FsReadOutside => (R::Machine, V::Trivial, E::None, S::Single),
            Capability::FsWriteWorkspace => (R::Workspace, V::Easy, E::None, S::Single),
            Capability::FsWriteOutside => (R::Machine, V::Hard, E::None, S::Single),
            Capability::FsDelete => (R::Workspace, V::Hard, E::None, S::Single),
            Capability::SecretRead => (R::Machine, V::Trivial, E::ReadsSecrets, S::Single),
            Capability::ExecInspect => (R::Workspace, V::Trivial, E::None, S::Single),
            Capability::ExecBuild | Capability::ExecTest => {
                (R::Workspace, V::Easy, E::None, S::Many)
            }
            Capability::ExecPkg => (R::Machine, V::Easy, E::None, S::Many),
            Capability::ExecPkgPublish => (R::External, V::Irreversible, E::None, S::Single),
            Capability::ExecVcsRead => (R::Workspace, V::Trivial, E::None, S::Single),
            Capability::ExecVcsWrite => (R::Workspace, V::Easy, E::None, S::Many),
            Capability::ExecVcsPublish => (R::External, V::Hard, E::None, S::Many),
            Capability::ExecContainerRead => (R::Machine, V::Trivial, E::None, S::Single),
            Capability::ExecContainer => (R::Machine, V::Easy, E::None, S::Many),
            Capability::ExecCloudRead => (R::External, V::Trivial, E::None, S::Single),
            Capability::ExecCloud => (R::External, V::Hard, E::None, S::Many),
            Capability::ExecIacPlan => (R::External, V::Trivial, E::None, S::Many),
            Capability::ExecIac => (R::External, V::Hard, E::None, S::Sweeping),
            Capability::ExecDbRead => (R::External, V::Trivial, E::None, S::Single),
            Capability::ExecDb => (R::External, V::Hard, E::None, S::Many),
            Capability::ExecProcess => (R::Machine, V::Easy, E::None, S::Single),
            Capability::ExecPrivilege => (R::Machine, V::Hard, E::None, S::Many),
            Capability::ExecRemote => (R::External, V::Hard, E::None, S::Many),
            Capability::ExecInterpreter => (R::Machine, V::Hard, E::None, S::Single),
            Capability::ExecUnknown => (R::Machine, V::Hard, E::None, S::Single),
            Capability::NetFetch => (R::Network, V::Trivial, E::None, S::Single),
            Capability::NetSend => (R::Network, V::Irreversible, E::CanExfiltrate, S::Single),
            Capability::McpCall => (R::External, V::Hard, E::None, S::Single),
            Capability::AgentSpawn => (R::Workspace, V::Easy, E::None, S::Many),
            Capability::Meta => (R::None, V::Trivial, E::None, S::Single),
        };
        Blast {
            reach,
            reversibility,
            exposure,
            scale,
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How far an action's effects can reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Reach {
    None,
    Workspace,
    Machine,
    Network,
    External,
    Production,
}

/// How hard an action is to undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Reversibility {
    Trivial,
    Easy,
    Hard,
    Irreversible,
}

/// Whether an action touches secrets or can carry data away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Exposure {
    None,
    ReadsSecrets,
    CanExfiltrate,
}

/// How many things an action touches at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Scale {
    Single,
    Many,
    Sweeping,
}

/// The four dimensions of what could go wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub struct Blast {
    pub reach: Reach,
    pub reversibility: Reversibility,
    pub exposure: Exposure,
    pub scale: Scale,
}

impl Blast {
    /// Combines the dimensions into a tier 0..=4 by maximum, never by average. Scale only bumps
    /// the tier when there is something to amplify: `npm test` touches many files but stays tier 1.
    #[inline]
    pub fn tier(&self) -> u8 {
        let reach = match self.reach {
            Reach::None => 0,
            Reach::Workspace => 1,
            Reach::Machine | Reach::Network => 2,
            Reach::External => 3,
            Reach::Production => 4,
        };
        let reversibility = match self.reversibility {
            Reversibility::Trivial => 0,
            Reversibility::Easy => 1,
            Reversibility::Hard => 3,
            Reversibility::Irreversible => 4,
        };
        let exposure = match self.exposure {
            Exposure::None => 0,
            Exposure::ReadsSecrets => 3,
            Exposure::CanExfiltrate => 4,
        };
        let base: u8 = reach.max(reversibility).max(exposure);
        let amplifiable = reach >= 2 || reversibility >= 3 || exposure > 0;
        let bump = match self.scale {
            Scale::Single => 0,
            Scale::Many => 1,
            Scale::Sweeping => 2,
        };
        if base > 0 && amplifiable {
            (base + bump).min(4)
        } else {
            base
        }
    }

    /// Raises each dimension to at least `other`'s: judgements only ever escalate.
    pub fn at_least(&mut self, other: Blast) {
        self.reach = self.reach.max(other.reach);
        self.reversibility = self.reversibility.max(other.reversibility);
        self.exposure = self.exposure.max(other.exposure);
        self.scale = self.scale.max(other.scale);
    }

    /// A sentence with no numbers, for people.
    pub fn describe(&self) -> String {
        let reach = match self.reach {
            Reach::None => "touches nothing",
            Reach::Workspace => "stays inside the project",
            Reach::Machine => "reaches beyond the project on this machine",
            Reach::Network => "talks to the network",
            Reach::External => "changes systems outside this machine",
            Reach::Production => "touches production",
        };
        let undo = match self.reversibility {
            Reversibility::Trivial => "nothing to undo",
            Reversibility::Easy => "easy to undo",
            Reversibility::Hard => "hard to undo",
            Reversibility::Irreversible => "cannot be undone",
        };
        let mut text = format!("{reach}, {undo}");
        match self.exposure {
            Exposure::None => {}
            Exposure::ReadsSecrets => text.push_str(", reads secrets"),
            Exposure::CanExfiltrate => text.push_str(", can send data away"),
        }
        match self.scale {
            Scale::Single => {}
            Scale::Many => text.push_str(", many files at once"),
            Scale::Sweeping => text.push_str(", sweeping"),
        }
        text
    }
}

/// How an action uses a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Access {
    Read,
    Write,
    Delete,
    Execute,
}

impl Access {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Delete => "delete",
            Access::Execute => "execute",
        }
    }
}

/// Which region outside the project a path falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Zone {
    Workspace,
    /// Exactly a directory above credential stores (`~`, `/`, `/etc`, `/home`, `~/.config`):
    /// reading it recursively sweeps secrets.
    CredentialTree,
    Etc,
    System,
    Runtime,
    Temp,
    Home,
    Other,
    Unresolved,
}

impl Zone {
    /// How far from the project a zone is, for choosing the stricter of two placements: the
    /// project first, then scratch space, elsewhere, the home, the machine's runtime and system
    /// directories, its configuration, a directory above credential stores, and a path nobody can
    /// place.
    pub fn strictness(self) -> u8 {
        match self {
            Zone::Workspace => 0,
            Zone::Temp => 1,
            Zone::Other => 2,
            Zone::Home => 3,
            Zone::Runtime => 4,
            Zone::System => 5,
            Zone::Etc => 6,
            Zone::CredentialTree => 7,
            Zone::Unresolved => 8,
        }
    }

    /// The placeholder suffix used in signatures.
    pub fn as_str(self) -> &'static str {
        match self {
            Zone::Workspace => "workspace",
            Zone::CredentialTree => "credential-tree",
            Zone::Etc => "etc",
            Zone::System => "system",
            Zone::Runtime => "runtime",
            Zone::Temp => "temp",
            Zone::Home => "home",
            Zone::Other => "other",
            Zone::Unresolved => "unresolved",
        }
    }
}

/// Everything the floors need to know about one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The region.
    pub zone: Zone,
    /// A credential store or a directory that holds them.
    pub secret: bool,
    /// A file or directory whose contents run later without being asked (shell startup, hooks,
    /// autostart, cron).
    pub persistence: bool,
    /// A file that steers an agent, CI or a later approved command (CLAUDE.md, workflows,
    /// `.claude/settings.json`, `package.json`).
    pub control: bool,
    /// Inside leastgrant's own state directory.
    pub own_state: bool,
    /// A container runtime's control socket (`/var/run/docker.sock`): talking to it is root.
    pub privileged: bool,
}

impl Placement {
    /// Widened by another place the same target also reaches (a brace alternative, a link
    /// below a walked directory): outside the project if that is, and every kind it has.
    pub fn widen(&mut self, other: &Placement) {
        if other.zone != Zone::Workspace && self.zone == Zone::Workspace {
            self.zone = other.zone;
        }
        self.secret |= other.secret;
        self.persistence |= other.persistence;
        self.control |= other.control;
        self.own_state |= other.own_state;
        self.privileged |= other.privileged;
    }

    /// Inside the project, and nothing special about it.
    pub fn is_plain_workspace(&self) -> bool {
        self.zone == Zone::Workspace
            && !self.secret
            && !self.persistence
            && !self.control
            && !self.privileged
    }

    /// The stricter of two placements of one path (as written and as the file system resolves
    /// it): the zone further from the project, every flag of either.
    pub fn stricter(self, other: Placement) -> Placement {
        Placement {
            zone: if other.zone.strictness() > self.zone.strictness() {
                other.zone
            } else {
                self.zone
            },
            secret: self.secret || other.secret,
            persistence: self.persistence || other.persistence,
            control: self.control || other.control,
            own_state: self.own_state || other.own_state,
            privileged: self.privileged || other.privileged,
        }
    }
}

/// A path an action touches, resolved against the working directory and placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The path as resolved (absolute and normalised when resolvable, else as written).
    pub path: String,
    /// Where the path leads through symbolic links, when the caller could see them and that is
    /// somewhere else than `path` says (`/p/docs/x.md` → `/home/u/.aws/credentials`). The
    /// placement is the stricter of the two.
    pub link: Option<String>,
    /// It holds unquoted glob characters (`cat .en?`): the shell expands it.
    pub glob: bool,
    /// The action reaches everything below it (a recursive read, copy or delete).
    pub recursive: bool,
    /// How the action uses it.
    pub access: Access,
    /// Where it lies.
    pub placement: Placement,
}

/// One thing an event does, classified.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// What kind of thing it is.
    pub capability: Capability,
    /// What could go wrong.
    pub blast: Blast,
    /// The identity learning is keyed on (redacted, volatile parts replaced by placeholders).
    pub signature: String,
    /// The action's own text, redacted, for people.
    pub display: String,
    /// The paths it touches.
    pub targets: Vec<Target>,
    /// Whether the engine accounted for everything this action does.
    pub understood: bool,
    /// Why not, when it is not understood (empty otherwise).
    pub unknowns: Vec<String>,
    /// Facts that raise a floor regardless of learning.
    pub flags: ActionFlags,
    /// What permission rules and grants are matched against.
    pub subject: Subject,
}

/// What a permission rule sees of an action: the tool in Claude Code's spelling, and the text a
/// specifier is matched against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject {
    /// The tool, in Claude Code's spelling (`Bash`, `Read`, `Edit`, `WebFetch`, `mcp__s__t`);
    /// other agents' tools are mapped onto it (Cursor's `read_file` is `Read`).
    pub tool: String,
    /// Shell actions: the program as written and its arguments, wrappers peeled, each word
    /// quoted as the shell would need it.
    pub command: Option<String>,
    /// Shell actions: the whole simple command as written, wrappers included.
    pub written: Option<String>,
    /// A wrapper that changes the risk (privilege, a shell, arguments from input) was peeled.
    pub risky_wrapper: bool,
    /// Structured tools: the primary argument (the URL, the query, the path as given).
    pub text: Option<String>,
    /// Effects a rule for the command does not name: assignments before it, or redirections to
    /// files outside the plain project. An allow rule does not cover them.
    pub unnamed_effects: bool,
    /// The action spelled with its paths resolved and its flags sorted (`rm -f -r /p/src`):
    /// what a grant for this exact action compares.
    pub spelling: String,
    /// The spelling without flags: what a deny grant compares, so extra flags do not escape it.
    pub spelling_without_flags: String,
    /// The call's arguments, canonical (what a `ThisCall` grant compares); shared by the
    /// call's actions.
    pub call_args: Option<std::sync::Arc<serde_json::Value>>,
    /// The tool's descriptor digest, when the agent reported the tool's schema.
    pub descriptor: Option<String>,
}

impl Action {
    /// The tier of its blast radius.
    #[inline]
    pub fn tier(&self) -> u8 {
        self.blast.tier()
    }
}

/// Facts about how an action runs, found by the shell analysis, that floors look at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ActionFlags {
    pub privilege: bool,
    pub piped_from_network: bool,
    pub fetch_run: bool,
    pub persistence: bool,
    pub remote: bool,
    pub in_loop: bool,
    pub background: bool,
    /// It runs code the engine cannot read (inline code, commands an editor or pager is given,
    /// plugins and toolchains a runner is told to load, a runner started in another
    /// directory): a floor no evidence and no posture unlocks.
    pub unread_code: bool,
    /// It reaches the cloud metadata service (or another link-local address), in any spelling.
    pub metadata: bool,
    /// A URL it names carries credentials (user-info, a token or signature parameter).
    pub url_credentials: bool,
    /// It drives a container runtime's API (its socket named, `DOCKER_HOST` set): root on the
    /// machine, the privilege floor.
    pub container_socket: bool,
}
