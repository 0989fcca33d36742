//! The agents' catalogue: for each agent leastgrant speaks to, every event it knows by name, the
//! surface that event is, what its payload carries, whether `leastgrant install` registers it
//! (and for which tools), what each verdict becomes on each surface, and what the agent does
//! when the hook fails. The hook, `leastgrant install` and `leastgrant doctor` all read it;
//! nothing else spells an agent's event names (docs/formats.md).
//!
//! Must not: read payloads or write answers (`agent.rs` does, from these facts), or touch the
//! file system.

use leastgrant_engine::Decision;

/// An agent the hook speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code (`~/.claude/settings.json` hooks).
    ClaudeCode,
    /// Cursor (`~/.cursor/hooks.json`).
    Cursor,
    /// Codex CLI (`~/.codex/hooks.json`).
    Codex,
    /// GitHub Copilot CLI (`~/.copilot/hooks/*.json`).
    Copilot,
    /// Gemini CLI (`~/.gemini/settings.json` hooks).
    Gemini,
}

/// What a surface needs from the hook, and what a verdict becomes there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Claude `PreToolUse` (also Copilot's `PreToolUse`, the Claude-compatible dialect): allow,
    /// ask and deny all carry.
    ClaudePreToolUse,
    /// Claude `PermissionRequest`: allow or deny; ask means "show the dialog" (abstain).
    ClaudePermissionRequest,
    /// Cursor `beforeShellExecution` / `beforeMCPExecution`: allow, ask and deny carry.
    CursorAskable,
    /// Cursor `preToolUse`: allow or deny only (an ask is accepted and silently allowed).
    CursorNoAsk,
    /// Cursor `beforeReadFile`: allow or deny, with no message for the model.
    CursorReadFile,
    /// Codex `PreToolUse`: only a deny carries. An allow is silence (a bare `allow` is rejected
    /// and the call runs) and so is an ask (rejected, the call runs), so an ask is refused.
    CodexPreToolUse,
    /// Codex `PermissionRequest`: allow or deny, the one place a learned allow approves; ask
    /// means "show Codex's own prompt" (abstain).
    CodexPermissionRequest,
    /// Copilot `preToolUse` (the camelCase dialect): flat `permissionDecision`, all three carry.
    CopilotPreToolUse,
    /// Gemini `BeforeTool`: allow or deny (`decision`); there is no ask, so an ask is refused.
    GeminiBeforeTool,
    /// After the call ran (or failed): recorded in the ledger, answered with nothing.
    Ran {
        /// The call succeeded.
        ok: bool,
    },
    /// Anything else (lifecycle, prompts, unknown events): no opinion.
    Other,
}

/// What the agent is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// The call runs.
    Allow,
    /// A person is asked.
    Ask,
    /// The call is refused.
    Deny,
    /// No opinion: nothing is written, and the agent decides as it would without the hook.
    Abstain,
}

impl Answered {
    /// `allow`, `ask`, `deny` or `abstain` (the ledger's `answered`).
    pub fn as_str(self) -> &'static str {
        match self {
            Answered::Allow => "allow",
            Answered::Ask => "ask",
            Answered::Deny => "deny",
            Answered::Abstain => "abstain",
        }
    }
}

impl Surface {
    /// A gate: the hook must answer with a verdict.
    pub fn gates(self) -> bool {
        matches!(
            self,
            Surface::ClaudePreToolUse
                | Surface::ClaudePermissionRequest
                | Surface::CursorAskable
                | Surface::CursorNoAsk
                | Surface::CursorReadFile
                | Surface::CodexPreToolUse
                | Surface::CodexPermissionRequest
                | Surface::CopilotPreToolUse
                | Surface::GeminiBeforeTool
        )
    }

    /// What a verdict becomes here. Where a surface cannot ask, a person must still decide, so
    /// an ask is refused (with a message saying how to proceed) — except on a
    /// `PermissionRequest`, where abstaining shows the person the agent's own dialog. On Codex's
    /// `PreToolUse` an allow is silence: the only allow it accepts rewrites the input.
    pub fn answers(self, decision: Decision) -> Answered {
        let plain = match decision {
            Decision::Allow => Answered::Allow,
            Decision::Ask => Answered::Ask,
            Decision::Deny => Answered::Deny,
        };
        match (self, decision) {
            (Surface::ClaudePermissionRequest | Surface::CodexPermissionRequest, Decision::Ask) => {
                Answered::Abstain
            }
            (
                Surface::CursorNoAsk
                | Surface::CursorReadFile
                | Surface::CodexPreToolUse
                | Surface::GeminiBeforeTool,
                Decision::Ask,
            ) => Answered::Deny,
            (Surface::CodexPreToolUse, Decision::Allow) => Answered::Abstain,
            (Surface::Ran { .. } | Surface::Other, _) => Answered::Abstain,
            _ => plain,
        }
    }
}

/// What an event's payload carries about the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carries {
    /// `tool_name` and `tool_input` (a JSON object, or Cursor MCP's JSON text), in the agent's
    /// own tool names.
    Tool,
    /// Copilot's camelCase dialect: `toolName` and `toolArgs` (JSON text, or an object).
    CopilotTool,
    /// Cursor's `command`: a shell command.
    Shell,
    /// Cursor's MCP tool: `tool_name`, `tool_input`, and the server the host reports.
    Mcp,
    /// Cursor's `file_path`, about to be read.
    FileRead,
    /// Cursor's `file_path`, just edited.
    FileEdited,
}

/// One event an agent sends the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The event name, spelled (case and all) as the agent spells it.
    pub name: &'static str,
    /// Its surface.
    pub surface: Surface,
    /// What its payload says about the call.
    pub carries: Carries,
    /// `leastgrant install` registers the hook on it.
    pub registered: bool,
    /// The tools the registration is narrowed to, where it is (`None`: every tool).
    pub matcher: Option<&'static str>,
}

const fn event(name: &'static str, surface: Surface, carries: Carries) -> Event {
    Event {
        name,
        surface,
        carries,
        registered: true,
        matcher: None,
    }
}

/// Claude Code's events, those `install` registers first, in the order it writes them.
const CLAUDE_EVENTS: [Event; 4] = [
    event("PreToolUse", Surface::ClaudePreToolUse, Carries::Tool),
    event("PostToolUse", Surface::Ran { ok: true }, Carries::Tool),
    event(
        "PostToolUseFailure",
        Surface::Ran { ok: false },
        Carries::Tool,
    ),
    // Answered when a person's settings register it; `install` does not.
    Event {
        registered: false,
        ..event(
            "PermissionRequest",
            Surface::ClaudePermissionRequest,
            Carries::Tool,
        )
    },
];

/// Cursor's events, those `install` registers first, in the order it writes them. Only known
/// names are ever written: cursor-agent drops the whole file over one event name it does not
/// know.
const CURSOR_EVENTS: [Event; 9] = [
    event(
        "beforeShellExecution",
        Surface::CursorAskable,
        Carries::Shell,
    ),
    event("beforeMCPExecution", Surface::CursorAskable, Carries::Mcp),
    event("beforeReadFile", Surface::CursorReadFile, Carries::FileRead),
    Event {
        matcher: Some("Read|Write|Delete"),
        ..event("preToolUse", Surface::CursorNoAsk, Carries::Tool)
    },
    event(
        "afterShellExecution",
        Surface::Ran { ok: true },
        Carries::Shell,
    ),
    event("afterMCPExecution", Surface::Ran { ok: true }, Carries::Mcp),
    event(
        "afterFileEdit",
        Surface::Ran { ok: true },
        Carries::FileEdited,
    ),
    // Answered when a person's configuration registers them; `install` does not.
    Event {
        registered: false,
        ..event("postToolUse", Surface::Ran { ok: true }, Carries::Tool)
    },
    Event {
        registered: false,
        ..event(
            "postToolUseFailure",
            Surface::Ran { ok: false },
            Carries::Tool,
        )
    },
];

/// Codex CLI's events, those `install` registers first, in the order it writes them.
const CODEX_EVENTS: [Event; 3] = [
    event("PreToolUse", Surface::CodexPreToolUse, Carries::Tool),
    event("PostToolUse", Surface::Ran { ok: true }, Carries::Tool),
    // Fires only where Codex would prompt and `PreToolUse` refused nothing: a learned allow
    // approves there.
    event(
        "PermissionRequest",
        Surface::CodexPermissionRequest,
        Carries::Tool,
    ),
];

/// Copilot CLI's events. The event name's case picks the payload's dialect: `install` writes
/// the PascalCase ones (Claude's fields, with a session id); the camelCase ones are answered
/// when a person's configuration registers them.
const COPILOT_EVENTS: [Event; 4] = [
    event("PreToolUse", Surface::ClaudePreToolUse, Carries::Tool),
    event("PostToolUse", Surface::Ran { ok: true }, Carries::Tool),
    Event {
        registered: false,
        ..event(
            "preToolUse",
            Surface::CopilotPreToolUse,
            Carries::CopilotTool,
        )
    },
    Event {
        registered: false,
        ..event(
            "postToolUse",
            Surface::Ran { ok: true },
            Carries::CopilotTool,
        )
    },
];

/// Gemini CLI's events, in the order `install` writes them.
const GEMINI_EVENTS: [Event; 2] = [
    event("BeforeTool", Surface::GeminiBeforeTool, Carries::Tool),
    event("AfterTool", Surface::Ran { ok: true }, Carries::Tool),
];

/// What an agent does when the hook crashes, hangs past its timeout or cannot be run at a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// The call runs unjudged.
    Open,
    /// The call is refused (Cursor's gates, which `install` writes with `failClosed`; Copilot
    /// CLI always).
    Closed,
}

/// What an agent enforces, per verdict and failure, in words for `leastgrant doctor`.
#[derive(Debug, Clone, Copy)]
pub struct Enforcement {
    /// Allow and deny.
    pub allow_deny: &'static str,
    /// Ask.
    pub ask: &'static str,
    /// File reads.
    pub reads: &'static str,
    /// A crash or timeout of the hook.
    pub on_failure: &'static str,
    /// Whether a person is at the keyboard.
    pub attended: &'static str,
}

impl Agent {
    /// Every agent, in the order `doctor` reports them.
    pub const ALL: [Agent; 5] = [
        Agent::ClaudeCode,
        Agent::Cursor,
        Agent::Codex,
        Agent::Copilot,
        Agent::Gemini,
    ];

    /// The `--agent` name, also the ledger's.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Cursor => "cursor",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
            Agent::Gemini => "gemini",
        }
    }

    /// Parses an `--agent` name.
    pub fn parse(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// The product name, for messages.
    pub fn title(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Cursor => "Cursor",
            Agent::Codex => "Codex CLI",
            Agent::Copilot => "Copilot CLI",
            Agent::Gemini => "Gemini CLI",
        }
    }

    /// Every event of this agent the hook knows.
    pub fn events(self) -> &'static [Event] {
        match self {
            Agent::ClaudeCode => &CLAUDE_EVENTS,
            Agent::Cursor => &CURSOR_EVENTS,
            Agent::Codex => &CODEX_EVENTS,
            Agent::Copilot => &COPILOT_EVENTS,
            Agent::Gemini => &GEMINI_EVENTS,
        }
    }

    /// The events `install` registers, in the order it writes them.
    pub fn registered(self) -> impl Iterator<Item = &'static Event> {
        self.events().iter().filter(|e| e.registered)
    }

    /// The event of a name (exact: names are case-sensitive, and Claude's `PreToolUse` and
    /// Cursor's `preToolUse` are different surfaces).
    pub fn event(self, name: &str) -> Option<&'static Event> {
        self.events().iter().find(|e| e.name == name)
    }

    /// What the agent does when the hook fails at a gate.
    pub fn on_failure(self) -> OnFailure {
        match self {
            Agent::ClaudeCode | Agent::Codex | Agent::Gemini => OnFailure::Open,
            Agent::Cursor | Agent::Copilot => OnFailure::Closed,
        }
    }

    /// What the agent enforces (from the compatibility research; see docs/formats.md).
    pub fn enforcement(self) -> Enforcement {
        match self {
            Agent::ClaudeCode => Enforcement {
                allow_deny: "honoured",
                ask: "prompts in an interactive session; a deny under -p",
                reads: "gated before the read (PreToolUse)",
                on_failure: "fails OPEN: a crash or timeout lets the call run",
                attended: "from the session's permission mode",
            },
            Agent::Cursor => Enforcement {
                allow_deny: "honoured",
                ask: "prompts only on the shell and MCP gates; preToolUse would allow it silently, so leastgrant answers deny there",
                reads: "preToolUse (Read) gates the read; beforeReadFile sees the content after it",
                on_failure: "fails CLOSED on the gates (failClosed): a crash or timeout refuses the call",
                attended: "no permission mode: every session counts as unattended",
            },
            Agent::Codex => Enforcement {
                allow_deny: "deny honoured on PreToolUse; an allow there is silence (the call goes on to Codex's own approval), and PermissionRequest turns a learned allow into an approval",
                ask: "not carried by PreToolUse (Codex would run the call), so leastgrant refuses it with how to allow it; on PermissionRequest Codex shows its own prompt",
                reads: "no read tool: reads are shell commands, gated as such",
                on_failure: "fails OPEN: a crash, timeout, bad output or an untrusted hook lets the call run (`codex exec` drops hooks not trusted in /hooks)",
                attended: "bypassPermissions is unattended; `default` does not say whether a person is asked",
            },
            Agent::Copilot => Enforcement {
                allow_deny: "honoured",
                ask: "prompts in an interactive session; a deny under -p",
                reads: "gated before the read (the view tool)",
                on_failure: "fails CLOSED: a crash of the hook refuses the call",
                attended: "no permission mode: every session counts as unattended",
            },
            Agent::Gemini => Enforcement {
                allow_deny: "honoured (BeforeTool `decision`)",
                ask: "there is no ask: leastgrant refuses it with how to allow it",
                reads: "gated before the read (read_file)",
                on_failure: "fails OPEN: any exit but 0 and 2, a crash or a timeout lets the call run, so the hook never exits otherwise",
                attended: "no permission mode: every session counts as unattended",
            },
        }
    }
}

/// The surface of an event name for an agent; an event the catalogue does not list is
/// [`Surface::Other`].
pub fn surface(agent: Agent, event: &str) -> Surface {
    agent.event(event).map_or(Surface::Other, |e| e.surface)
}
