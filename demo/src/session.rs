//! One simulated session: turns of calls, who asks before which call, what the person answers,
//! and the records Claude Code would write for them.

use leastgrant_ingest::common::iso_millis as iso;
use leastgrant_ingest::outcome::{CANCELLED, INTERRUPT_MARKER, REFUSED};

use crate::calibration::{
    FEEDBACK_RISKY, FEEDBACK_ROUTINE, INTERRUPT_LONG, MODE_ACCEPT_EDITS, MODE_DEFAULT,
    REFUSE_RISKY, REFUSE_ROUTINE, RISKY_PER_TURN,
};
use crate::project::{Project, Slot, fill};
use crate::text::{Obj, Rng, base62, hex, jstr, number_lines, pick_fmt, uuid};
use crate::vocabulary::{
    COMMITS, Cmd, FEATURES, Failure, GIT_READS, INSPECT, RISKY, ROUTINE_REFUSALS, Risky, RiskyTool,
    StackData, TOPICS,
};

// ---------------------------------------------------------------------------------------------
// One call, and one session.

/// When Claude Code asks before running a call.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Gate {
    /// Never (reads and searches inside the project, the todo list, sub-agents).
    Never,
    /// In `default` mode only (edits inside the project).
    Edits,
    /// Unless permissions are bypassed (shell, fetches, MCP, anything outside the project).
    Always,
}

/// A tool call and what it returns when it runs.
pub(super) struct Call {
    pub(super) tool: String,
    pub(super) input: String,
    /// The `tool_result` content (JSON) and the `toolUseResult` (JSON) when it runs.
    pub(super) content: String,
    pub(super) tool_use_result: String,
    pub(super) error: bool,
    pub(super) ms: u64,
    pub(super) gate: Gate,
    pub(super) risky: Option<&'static Risky>,
    /// It runs long enough to be interrupted.
    pub(super) long: bool,
    /// A Bash call (interrupts are flagged on its `toolUseResult`).
    pub(super) bash: bool,
}

/// What became of a call.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    Ran,
    Refused { feedback: bool },
    Cancelled,
    Interrupted,
}

/// One turn: the person's prompt, then the agent's steps (each one API response, its calls in
/// parallel), then its closing words.
pub(super) struct Turn {
    pub(super) prompt: String,
    pub(super) opening: String,
    pub(super) steps: Vec<Vec<Call>>,
    pub(super) closing: String,
}

#[derive(Default)]
pub(super) struct Tally {
    pub(super) events: u64,
    pub(super) refused: u64,
}

pub(super) struct Session<'a> {
    pub(super) project: &'a Project,
    pub(super) stack: &'static StackData,
    pub(super) other: &'a str,
    pub(super) rng: &'a mut Rng,
    pub(super) id: String,
    pub(super) version: String,
    pub(super) branch: String,
    pub(super) model: &'static str,
    pub(super) mode: &'static str,
    /// This build writes `toolDenialKind` on a refusal.
    pub(super) denial_kind: bool,
    pub(super) clock_ms: i64,
    pub(super) parent: Option<String>,
    pub(super) text: String,
    pub(super) tally: Tally,
    /// What the person says next after stopping the agent.
    pub(super) redirect: Option<String>,
    pub(super) turns: u64,
}

impl<'a> Session<'a> {
    pub(super) fn new(
        project: &'a Project,
        other: &'a str,
        slot: &Slot,
        rng: &'a mut Rng,
    ) -> Session<'a> {
        let id = uuid(rng);
        // Claude Code updated about twice a week over the history.
        let build = 148 + slot.day * 2 / 7 * 2 + u32::from(rng.chance(0.3));
        let version = format!("2.1.{build}");
        let branch = if rng.chance(0.45) {
            "main".to_string()
        } else {
            rng.pick(COMMITS).1.to_string()
        };
        let roll = rng.unit();
        let mode = if roll < MODE_DEFAULT {
            "default"
        } else if roll < MODE_DEFAULT + MODE_ACCEPT_EDITS {
            "acceptEdits"
        } else {
            "bypassPermissions"
        };
        let model = if rng.chance(0.7) {
            "claude-sonnet-4-5-20250929"
        } else {
            "claude-opus-4-5-20251101"
        };
        let turns = match rng.below(10) {
            0 | 1 => rng.range(3, 6),
            2..=6 => rng.range(9, 20),
            _ => rng.range(22, 44),
        };
        Session {
            project,
            stack: project.stack.data(),
            other,
            rng,
            id,
            version,
            branch,
            model,
            mode,
            denial_kind: build >= 156,
            clock_ms: slot.start_ms,
            parent: None,
            text: String::new(),
            tally: Tally::default(),
            redirect: None,
            turns,
        }
    }

    pub(super) fn play(&mut self) {
        self.line(
            Obj::new()
                .s("type", "permission-mode")
                .s("permissionMode", self.mode)
                .s("sessionId", &self.id)
                .done(),
        );
        for index in 0..self.turns {
            // Shift+Tab: a person who watched a while lets edits through, or takes the wheel.
            if index > 0 && self.rng.chance(0.04) {
                self.mode = match self.mode {
                    "default" => "acceptEdits",
                    "acceptEdits" if self.rng.chance(0.3) => "default",
                    other => other,
                };
            }
            let turn = self.plan_turn(index);
            self.play_turn(turn);
        }
    }

    // -- records -------------------------------------------------------------------------------

    pub(super) fn line(&mut self, json: String) {
        self.text.push_str(&json);
        self.text.push('\n');
    }

    pub(super) fn tick(&mut self, from_ms: u64, to_ms: u64) {
        self.clock_ms += self.rng.range(from_ms, to_ms) as i64;
    }

    /// The envelope's first fields, in Claude Code's order.
    pub(super) fn envelope(&self) -> Obj {
        let obj = Obj::new();
        let obj = match &self.parent {
            Some(p) => obj.s("parentUuid", p),
            None => obj.raw("parentUuid", "null"),
        };
        obj.b("isSidechain", false)
            .s("userType", "external")
            .s("cwd", &self.project.root)
            .s("sessionId", &self.id)
            .s("version", &self.version)
            .s("gitBranch", &self.branch)
    }

    /// Writes a record finished by `tail` and returns its uuid.
    pub(super) fn record(&mut self, head: Obj, tail: impl FnOnce(Obj) -> Obj) -> String {
        self.clock_ms += 1 + self.rng.below(40) as i64;
        let uuid = uuid(self.rng);
        let obj = tail(head.s("uuid", &uuid).s("timestamp", &iso(self.clock_ms)));
        self.line(obj.done());
        self.parent = Some(uuid.clone());
        uuid
    }

    pub(super) fn prompt(&mut self, text: &str) {
        let message_id = uuid(self.rng);
        let snapshot = Obj::new()
            .s("messageId", &message_id)
            .raw("trackedFileBackups", "{}")
            .s("timestamp", &iso(self.clock_ms))
            .done();
        self.line(
            Obj::new()
                .s("type", "file-history-snapshot")
                .s("messageId", &message_id)
                .raw("snapshot", &snapshot)
                .b("isSnapshotUpdate", false)
                .done(),
        );
        let message = Obj::new().s("role", "user").s("content", text).done();
        let head = self.envelope().s("type", "user").raw("message", &message);
        let mode = self.mode;
        self.record(head, |o| o.s("permissionMode", mode));
    }

    pub(super) fn user_text(&mut self, text: &str) {
        let block = Obj::new().s("type", "text").s("text", text).done();
        let message = Obj::new()
            .s("role", "user")
            .raw("content", &format!("[{block}]"))
            .done();
        let head = self.envelope().s("type", "user").raw("message", &message);
        self.record(head, |o| o);
    }

    pub(super) fn usage(&mut self) -> String {
        Obj::new()
            .n("input_tokens", self.rng.range(3, 12))
            .n("cache_creation_input_tokens", self.rng.range(200, 4000))
            .n("cache_read_input_tokens", self.rng.range(12_000, 90_000))
            .n("output_tokens", self.rng.range(20, 600))
            .s("service_tier", "standard")
            .done()
    }

    pub(super) fn assistant(
        &mut self,
        block: &str,
        message_id: &str,
        request_id: &str,
        usage: &str,
    ) -> String {
        let message = Obj::new()
            .s("id", message_id)
            .s("type", "message")
            .s("role", "assistant")
            .s("model", self.model)
            .raw("content", &format!("[{block}]"))
            .raw("stop_reason", "null")
            .raw("stop_sequence", "null")
            .raw("usage", usage)
            .done();
        let head = self
            .envelope()
            .raw("message", &message)
            .s("requestId", request_id)
            .s("type", "assistant");
        self.record(head, |o| o)
    }

    pub(super) fn assistant_text(&mut self, text: &str) {
        let message_id = format!("msg_01{}", base62(self.rng, 22));
        let request_id = format!("req_011C{}", base62(self.rng, 20));
        let usage = self.usage();
        let block = Obj::new().s("type", "text").s("text", text).done();
        self.assistant(&block, &message_id, &request_id, &usage);
    }

    // -- turns ---------------------------------------------------------------------------------

    pub(super) fn play_turn(&mut self, turn: Turn) {
        let prompt = match self.redirect.take() {
            Some(redirect) => redirect,
            None => turn.prompt,
        };
        self.tick(20_000, 600_000);
        if self.rng.chance(0.03) {
            self.tick(1_800_000, 5_400_000); // lunch, a meeting
        }
        let turn_start = self.clock_ms;
        self.prompt(&prompt);
        for (index, step) in turn.steps.into_iter().enumerate() {
            self.tick(1_500, 20_000);
            let message_id = format!("msg_01{}", base62(self.rng, 22));
            let request_id = format!("req_011C{}", base62(self.rng, 20));
            let usage = self.usage();
            if index == 0 {
                let block = Obj::new().s("type", "text").s("text", &turn.opening).done();
                self.assistant(&block, &message_id, &request_id, &usage);
            }
            let mut ids = Vec::with_capacity(step.len());
            for call in &step {
                let id = format!("toolu_01{}", base62(self.rng, 22));
                let block = Obj::new()
                    .s("type", "tool_use")
                    .s("id", &id)
                    .s("name", &call.tool)
                    .raw("input", &call.input)
                    .done();
                let uuid = self.assistant(&block, &message_id, &request_id, &usage);
                ids.push((id, uuid));
                self.tally.events += 1;
                self.clock_ms += self.rng.range(30, 400) as i64;
            }
            let mut stopped = false;
            let batch_start = self.clock_ms;
            for (call, (id, assistant_uuid)) in step.iter().zip(&ids) {
                let fate = if stopped {
                    Fate::Cancelled
                } else {
                    self.fate(call)
                };
                let wait_ms = match fate {
                    Fate::Refused { .. } => self.rng.range(4_000, 60_000),
                    _ if self.asks(call) => self.rng.range(1_500, 15_000),
                    _ => 0,
                };
                let run_ms = match fate {
                    Fate::Ran => call.ms,
                    Fate::Interrupted => call.ms.min(self.rng.range(8_000, 120_000)),
                    _ => 0,
                };
                self.clock_ms = self.clock_ms.max(batch_start + (wait_ms + run_ms) as i64);
                self.result(call, id, assistant_uuid, fate);
                match fate {
                    Fate::Refused { feedback: false } | Fate::Interrupted => stopped = true,
                    _ => {}
                }
                if let (Fate::Refused { feedback: false }, Some(risky)) = (fate, call.risky) {
                    self.redirect = Some(risky.redirect.to_string());
                }
            }
            if stopped {
                self.user_text(INTERRUPT_MARKER);
                if self.redirect.is_none() {
                    self.redirect = Some(
                        (*self.rng.pick(&[
                            "Sorry, that was taking too long. Carry on without running it.",
                            "Stop, wrong approach. Let's look at the failing case first.",
                            "Wait, let me check something. OK, continue, but skip that step.",
                        ]))
                        .to_string(),
                    );
                }
                return;
            }
        }
        self.tick(2_000, 15_000);
        self.assistant_text(&turn.closing);
        let duration = (self.clock_ms - turn_start).max(0);
        let head = self
            .envelope()
            .s("type", "system")
            .s("subtype", "turn_duration")
            .n("durationMs", duration as u64)
            .b("isMeta", false);
        self.record(head, |o| o);
    }

    /// Whether Claude Code asks before running `call` in the current mode.
    pub(super) fn asks(&self, call: &Call) -> bool {
        match call.gate {
            Gate::Never => false,
            Gate::Edits => self.mode == "default",
            Gate::Always => self.mode != "bypassPermissions",
        }
    }

    pub(super) fn fate(&mut self, call: &Call) -> Fate {
        if self.asks(call) {
            let (refuse, feedback) = if call.risky.is_some() {
                (REFUSE_RISKY, FEEDBACK_RISKY)
            } else {
                (REFUSE_ROUTINE, FEEDBACK_ROUTINE)
            };
            if self.rng.chance(refuse) {
                return Fate::Refused {
                    feedback: self.rng.chance(feedback),
                };
            }
        }
        if call.long && self.rng.chance(INTERRUPT_LONG) {
            return Fate::Interrupted;
        }
        Fate::Ran
    }

    pub(super) fn result(&mut self, call: &Call, id: &str, assistant_uuid: &str, fate: Fate) {
        let rejected = format!(
            "{REFUSED} The tool use was rejected (eg. if it was a file edit, the new_string was NOT \
             written to the file)."
        );
        let (content, is_error, tool_use_result, denial) = match fate {
            Fate::Ran => (
                call.content.clone(),
                call.error,
                call.tool_use_result.clone(),
                false,
            ),
            Fate::Refused { feedback } => {
                let text = if feedback {
                    let words = match call.risky {
                        Some(risky) => risky.redirect,
                        None => self.rng.pick(ROUTINE_REFUSALS),
                    };
                    format!("{rejected} To tell you how to proceed, the user said:\n{words}")
                } else {
                    format!(
                        "{rejected} STOP what you are doing and wait for the user to tell you how \
                         to proceed."
                    )
                };
                self.tally.refused += 1;
                (jstr(&text), true, jstr(&format!("Error: {text}")), true)
            }
            Fate::Cancelled => {
                let text = format!(
                    "{CANCELLED} STOP what you are doing and wait for the user to tell you how to \
                     proceed."
                );
                (jstr(&text), true, jstr(&format!("Error: {text}")), false)
            }
            Fate::Interrupted if call.bash => {
                let text = format!(
                    "{rejected} STOP what you are doing and wait for the user to tell you how to \
                     proceed."
                );
                let result = Obj::new()
                    .s("stdout", "")
                    .s("stderr", "")
                    .b("interrupted", true)
                    .b("isImage", false)
                    .done();
                (jstr(&text), true, result, false)
            }
            Fate::Interrupted => (
                jstr(INTERRUPT_MARKER),
                true,
                jstr(&format!("Error: {INTERRUPT_MARKER}")),
                false,
            ),
        };
        let mut block = Obj::new()
            .s("tool_use_id", id)
            .s("type", "tool_result")
            .raw("content", &content);
        if is_error {
            block = block.b("is_error", true);
        }
        let message = Obj::new()
            .s("role", "user")
            .raw("content", &format!("[{}]", block.done()))
            .done();
        let head = self.envelope().s("type", "user").raw("message", &message);
        let with_kind = denial && self.denial_kind;
        self.record(head, |o| {
            let o = o.raw("toolUseResult", &tool_use_result);
            let o = if with_kind {
                o.s("toolDenialKind", "user-rejected")
            } else {
                o
            };
            o.s("sourceToolAssistantUUID", assistant_uuid)
        });
    }

    // -- planning ------------------------------------------------------------------------------

    pub(super) fn fill(&self, template: &str) -> String {
        fill(template, self.project, self.other, &self.branch)
    }

    pub(super) fn file(&mut self) -> String {
        let file = *self.rng.pick(self.stack.files);
        self.fill(file)
    }

    pub(super) fn plan_turn(&mut self, index: u64) -> Turn {
        let topic = *self.rng.pick(TOPICS);
        let roll = self.rng.below(100);
        let mut turn = if index == 0 && self.rng.chance(0.6) {
            self.explore(topic)
        } else {
            match roll {
                0..=14 => self.explore(topic),
                15..=47 => self.implement(),
                48..=61 => self.fix_tests(),
                62..=73 => self.commit(),
                74..=81 => self.research(topic),
                82..=88 => self.dependencies(topic),
                _ => self.chore(topic),
            }
        };
        if self.rng.chance(RISKY_PER_TURN) {
            let candidates: Vec<&'static Risky> = RISKY
                .iter()
                .filter(|r| r.stacks.is_empty() || r.stacks.contains(&self.project.stack))
                .collect();
            let risky = *self.rng.pick(&candidates);
            let call = self.risky(risky);
            let at = self.rng.range(0, turn.steps.len() as u64) as usize;
            // A secret read often goes out in parallel with ordinary reads.
            if matches!(risky.tool, RiskyTool::Read) && self.rng.chance(0.5) {
                let mut batch = vec![call];
                batch.push(self.read_call(None));
                turn.steps.insert(at.min(turn.steps.len()), batch);
            } else {
                turn.steps.insert(at.min(turn.steps.len()), vec![call]);
            }
        }
        turn
    }

    pub(super) fn explore(&mut self, topic: &str) -> Turn {
        let mut steps = Vec::new();
        if self.rng.chance(0.4) {
            steps.push(vec![self.glob_call()]);
        }
        for _ in 0..self.rng.range(1, 2) {
            steps.push(vec![self.grep_call()]);
        }
        let parallel = self.rng.range(1, 4);
        steps.push((0..parallel).map(|_| self.read_call(None)).collect());
        for _ in 0..self.rng.range(0, 3) {
            steps.push(vec![self.read_call(None)]);
        }
        if self.rng.chance(0.5) {
            steps.push(vec![self.any_of(GIT_READS)]);
        }
        if self.rng.chance(0.4) {
            steps.push(vec![self.any_of(INSPECT)]);
        }
        if self.rng.chance(0.15) {
            steps.push(vec![self.task_call(topic)]);
        }
        Turn {
            prompt: pick_fmt(
                self.rng,
                &[
                    "How does {topic} work in this repo? Walk me through it.",
                    "Where is {topic} handled? I need to change it.",
                    "Find everything that touches {topic}.",
                    "I'm new to this code. Explain {topic}.",
                ],
                topic,
            ),
            opening: format!("I'll look at how {topic} is put together first."),
            steps,
            closing: format!(
                "Here's how {topic} works: the entry point reads the config, the handler validates \
                 the input and the client does the I/O. The main logic is in {}.",
                self.file()
            ),
        }
    }

    pub(super) fn implement(&mut self) -> Turn {
        let stack = self.stack;
        let feature = *self.rng.pick(FEATURES);
        let mut steps = Vec::new();
        if self.rng.chance(0.35) {
            steps.push(vec![self.todo_call(feature)]);
        }
        let reads = self.rng.range(1, 3);
        steps.push((0..reads).map(|_| self.read_call(None)).collect());
        if self.rng.chance(0.3) {
            steps.push(vec![self.grep_call()]);
        }
        for _ in 0..self.rng.range(2, 6) {
            steps.push(vec![self.edit_call(None)]);
        }
        if self.rng.chance(0.3) {
            steps.push(vec![self.write_call()]);
        }
        let build = self.rng.pick(self.stack.build);
        if self.rng.chance(0.12) {
            steps.push(vec![self.bash_fail(build, &stack.build_failure)]);
            steps.push(vec![self.read_call(None)]);
            steps.push(vec![self.edit_call(None)]);
        }
        steps.push(vec![self.bash_ok(build)]);
        let test = self.rng.pick(self.stack.test);
        if self.rng.chance(0.3) {
            steps.push(vec![self.bash_fail(test, &stack.test_failure)]);
            steps.push(vec![self.read_call(None)]);
            for _ in 0..self.rng.range(1, 2) {
                steps.push(vec![self.edit_call(None)]);
            }
        }
        steps.push(vec![self.bash_ok(test)]);
        if self.rng.chance(0.4) {
            steps.push(vec![self.any_of(self.stack.lint)]);
        }
        if self.rng.chance(0.3) {
            steps.push(vec![self.bash_ok(&GIT_READS[1])]);
        }
        if self.rng.chance(0.08) {
            steps.push(vec![self.any_of(self.stack.serve)]);
        }
        Turn {
            prompt: pick_fmt(
                self.rng,
                &[
                    "Add {topic}.",
                    "Implement {topic}; keep the existing tests passing.",
                    "Can you add {topic}? With tests.",
                    "Next: {topic}. Same style as the rest of the module.",
                ],
                feature,
            ),
            opening: format!("I'll read the relevant code, then add {feature}."),
            steps,
            closing: format!("Added {feature}. The build and the tests pass."),
        }
    }

    pub(super) fn fix_tests(&mut self) -> Turn {
        let stack = self.stack;
        let test = self.rng.pick(self.stack.test);
        let mut steps = vec![vec![self.bash_fail(test, &stack.test_failure)]];
        let reads = self.rng.range(1, 2);
        steps.push((0..reads).map(|_| self.read_call(None)).collect());
        if self.rng.chance(0.4) {
            steps.push(vec![self.grep_call()]);
        }
        for _ in 0..self.rng.range(1, 3) {
            steps.push(vec![self.edit_call(None)]);
        }
        if self.rng.chance(0.2) {
            steps.push(vec![self.bash_fail(test, &stack.test_failure)]);
            steps.push(vec![self.edit_call(None)]);
        }
        steps.push(vec![self.bash_ok(test)]);
        if self.rng.chance(0.5) {
            steps.push(vec![self.any_of(self.stack.lint)]);
        }
        Turn {
            prompt: (*self.rng.pick(&[
                "The tests are failing on main, fix them.",
                "CI is red after my last change, please fix.",
                "One test fails locally. Find out why and fix it.",
                "Fix the failing test, don't change what it checks.",
            ]))
            .to_string(),
            opening: "Let me run the tests to see what fails.".to_string(),
            steps,
            closing: "Fixed: the empty key was accepted. All tests pass now.".to_string(),
        }
    }

    pub(super) fn commit(&mut self) -> Turn {
        let (message, branch) = *self.rng.pick(COMMITS);
        let mut steps = vec![
            vec![self.bash_ok(&GIT_READS[0]), self.bash_ok(&GIT_READS[1])],
            vec![self.bash_ok(&GIT_READS[2])],
        ];
        if self.branch == "main" && self.rng.chance(0.4) {
            let command = format!("git checkout -b {branch}");
            let output = format!("Switched to a new branch '{branch}'");
            steps.push(vec![self.bash(
                &command,
                "Create a branch",
                &output,
                300,
                false,
            )]);
        }
        let add = if self.rng.chance(0.5) {
            "git add -A".to_string()
        } else {
            format!("git add {} {}", self.file(), self.file())
        };
        steps.push(vec![self.bash(&add, "Stage the changes", "", 200, false)]);
        let command = if self.rng.chance(0.6) {
            format!(
                "git commit -m \"$(cat <<'EOF'\n{message}\n\n🤖 Generated with [Claude Code](https://claude.com/claude-code)\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\""
            )
        } else {
            format!("git commit -m \"{message}\"")
        };
        let output = format!(
            "[{} {}] {message}\n 2 files changed, 37 insertions(+), 6 deletions(-)",
            self.branch,
            hex(self.rng, 7)
        );
        steps.push(vec![self.bash(&command, "Commit", &output, 400, false)]);
        let push = self.rng.chance(0.35);
        if push {
            let branch = self.branch.clone();
            let command = format!("git push -u origin {branch}");
            let output = format!(
                "To github.com:demo-org/{}.git\n * [new branch]      {branch} -> {branch}\nbranch '{branch}' set up to track 'origin/{branch}'.",
                self.project.name
            );
            steps.push(vec![self.bash(
                &command,
                "Push the branch",
                &output,
                2_500,
                false,
            )]);
            if self.rng.chance(0.4) {
                let command = format!(
                    "gh pr create --title \"{message}\" --body \"$(cat <<'EOF'\n## Summary\n- {message}\n\n## Test plan\n- [x] tests pass locally\nEOF\n)\""
                );
                let output = format!(
                    "https://github.com/demo-org/{}/pull/{}",
                    self.project.name,
                    self.rng.range(12, 340)
                );
                steps.push(vec![self.bash(
                    &command,
                    "Open a pull request",
                    &output,
                    3_000,
                    false,
                )]);
            }
        }
        Turn {
            prompt: (*self.rng.pick(if push {
                &["Commit and push the branch.", "Commit this and push it."][..]
            } else {
                &["Commit this with a good message.", "Looks good, commit it."][..]
            }))
            .to_string(),
            opening: "I'll check what changed and commit it.".to_string(),
            steps,
            closing: format!("Committed: \"{message}\"."),
        }
    }

    pub(super) fn research(&mut self, topic: &str) -> Turn {
        let library = *self.rng.pick(self.stack.libraries);
        let mut steps = Vec::new();
        if self.rng.chance(0.5) {
            let resolve = Obj::new().s("libraryName", library).done();
            let library_id = format!("/{library}/{library}");
            let text = format!(
                "Available Libraries (top matches):\n\n- Title: {library}\n- Context7-compatible library ID: {library_id}\n- Trust Score: 9.1"
            );
            steps.push(vec![self.mcp_call(
                "mcp__context7__resolve-library-id",
                resolve,
                &text,
            )]);
            let docs = Obj::new()
                .s("context7CompatibleLibraryID", &library_id)
                .s("topic", topic)
                .n("tokens", 5000)
                .done();
            let text = format!(
                "TITLE: {topic} with {library}\nDESCRIPTION: How to configure {topic}.\nSOURCE: https://github.com/{library}/{library}/blob/main/docs/guide.md\n\nLANGUAGE: text\nCODE:\n(see the guide)"
            );
            steps.push(vec![self.mcp_call(
                "mcp__context7__get-library-docs",
                docs,
                &text,
            )]);
        }
        for _ in 0..self.rng.range(1, 2) {
            let url = *self.rng.pick(self.stack.docs);
            steps.push(vec![self.web_call(url, topic)]);
        }
        if self.rng.chance(0.3) {
            let input = Obj::new()
                .s("owner", "demo-org")
                .s("repo", &self.project.name)
                .s("state", "open")
                .done();
            steps.push(vec![self.mcp_call(
                "mcp__github__list_issues",
                input,
                "[{\"number\": 41, \"title\": \"Timeouts are not configurable\", \"state\": \"open\"}]",
            )]);
        }
        if self.rng.chance(0.25) {
            steps.push(vec![self.task_call(topic)]);
        }
        steps.push(vec![self.read_call(None)]);
        Turn {
            prompt: format!(
                "How should we do {topic} with {library}? Check the docs before changing anything."
            ),
            opening: format!("I'll check the {library} documentation for {topic}."),
            steps,
            closing: format!(
                "The documented way to handle {topic} in {library} is a builder option; we can \
                 switch to it in one place."
            ),
        }
    }

    pub(super) fn dependencies(&mut self, topic: &str) -> Turn {
        let install = self.rng.pick(self.stack.install);
        let manifest = self.stack.manifest.to_string();
        let mut steps = vec![vec![self.read_call(Some(manifest))]];
        steps.push(vec![self.bash_ok(install)]);
        for _ in 0..self.rng.range(1, 2) {
            steps.push(vec![self.edit_call(None)]);
        }
        steps.push(vec![self.any_of(self.stack.build)]);
        steps.push(vec![self.any_of(self.stack.test)]);
        Turn {
            prompt: format!("Use a proper library for {topic}; add it and wire it in."),
            opening: "I'll add the dependency and use it.".to_string(),
            steps,
            closing: format!("Added the dependency and switched {topic} over; the tests pass."),
        }
    }

    pub(super) fn chore(&mut self, topic: &str) -> Turn {
        let lint = self.rng.pick(self.stack.lint);
        let mut steps = vec![vec![self.bash_ok(lint)]];
        if self.rng.chance(0.5) {
            steps.push(vec![self.any_of(INSPECT)]);
        }
        for _ in 0..self.rng.range(1, 2) {
            steps.push(vec![self.read_call(None)]);
        }
        for _ in 0..self.rng.range(1, 3) {
            steps.push(vec![self.edit_call(None)]);
        }
        if self.rng.chance(0.3) {
            steps.push(vec![self.edit_call(Some("README.md".to_string()))]);
        }
        if self.rng.chance(0.3) {
            steps.push(vec![self.todo_call(topic)]);
        }
        steps.push(vec![self.bash_ok(lint)]);
        Turn {
            prompt: (*self.rng.pick(&[
                "Clean up the warnings.",
                "Update the README for the new flag.",
                "Tidy this module up a bit, no behaviour changes.",
                "Rename the confusing variables in the config code.",
            ]))
            .to_string(),
            opening: "I'll run the linter and tidy up.".to_string(),
            steps,
            closing: "Tidied up; the linter is clean.".to_string(),
        }
    }

    // -- calls ---------------------------------------------------------------------------------

    pub(super) fn absolute(&self, file: &str) -> String {
        if file.starts_with('/') {
            file.to_string()
        } else {
            format!("{}/{file}", self.project.root)
        }
    }

    /// Some numbered lines of the stack's code, as the Read tool prints them.
    pub(super) fn snippet(&mut self, count: u64) -> (u64, Vec<&'static str>) {
        let code = self.stack.code;
        let count = (count as usize).min(code.len());
        let first = self.rng.below((code.len() - count + 1) as u64) as usize;
        let lines: Vec<&'static str> = code.iter().skip(first).take(count).copied().collect();
        (self.rng.range(1, 120), lines)
    }

    pub(super) fn read_call(&mut self, file: Option<String>) -> Call {
        let file = file.unwrap_or_else(|| self.file());
        let path = self.absolute(&file);
        let input = Obj::new().s("file_path", &path).done();
        if self.rng.chance(0.015) {
            let text = format!(
                "<tool_use_error>File does not exist. Current working directory: {}</tool_use_error>",
                self.project.root
            );
            return self.failed("Read", input, &text, 30, Gate::Never);
        }
        let wanted = self.rng.range(6, 24);
        let (start, lines) = self.snippet(wanted);
        let count = lines.len() as u64;
        let numbered = number_lines(start, &lines);
        let body = lines.join("\n");
        let total = start + count + self.rng.range(0, 200);
        let file_obj = Obj::new()
            .s("filePath", &path)
            .s("content", &body)
            .n("numLines", count)
            .n("startLine", start)
            .n("totalLines", total)
            .done();
        let result = Obj::new().s("type", "text").raw("file", &file_obj).done();
        Call {
            tool: "Read".to_string(),
            input,
            content: jstr(&numbered),
            tool_use_result: result,
            error: false,
            ms: self.rng.range(15, 250),
            gate: Gate::Never,
            risky: None,
            long: false,
            bash: false,
        }
    }

    pub(super) fn glob_call(&mut self) -> Call {
        let pattern = format!("**/*.{}", self.stack.ext);
        let input = Obj::new().s("pattern", &pattern).done();
        let files: Vec<String> = (0..self.rng.range(3, 8))
            .map(|_| {
                let file = self.file();
                self.absolute(&file)
            })
            .collect();
        let list = files.iter().map(|f| jstr(f)).collect::<Vec<_>>().join(",");
        let result = Obj::new()
            .raw("filenames", &format!("[{list}]"))
            .n("durationMs", self.rng.range(5, 120))
            .n("numFiles", files.len() as u64)
            .b("truncated", false)
            .done();
        Call {
            tool: "Glob".to_string(),
            input,
            content: jstr(&files.join("\n")),
            tool_use_result: result,
            error: false,
            ms: self.rng.range(10, 150),
            gate: Gate::Never,
            risky: None,
            long: false,
            bash: false,
        }
    }

    pub(super) fn grep_call(&mut self) -> Call {
        let pattern = *self.rng.pick(self.stack.grep);
        let files: Vec<String> = (0..self.rng.range(1, 4))
            .map(|_| {
                let file = self.file();
                self.absolute(&file)
            })
            .collect();
        let list = files.iter().map(|f| jstr(f)).collect::<Vec<_>>().join(",");
        let (input, content, result) = if self.rng.chance(0.6) {
            let input = Obj::new()
                .s("pattern", pattern)
                .s("output_mode", "files_with_matches")
                .done();
            let content = format!("Found {} files\n{}", files.len(), files.join("\n"));
            let result = Obj::new()
                .s("mode", "files_with_matches")
                .raw("filenames", &format!("[{list}]"))
                .n("numFiles", files.len() as u64)
                .done();
            (input, content, result)
        } else {
            let input = Obj::new()
                .s("pattern", pattern)
                .s("path", &self.project.root)
                .s("output_mode", "content")
                .b("-n", true)
                .done();
            let (start, lines) = self.snippet(files.len() as u64);
            let content = files
                .iter()
                .zip(&lines)
                .enumerate()
                .map(|(i, (f, l))| format!("{f}:{}:{l}", start + i as u64 * 7))
                .collect::<Vec<_>>()
                .join("\n");
            let result = Obj::new()
                .s("mode", "content")
                .n("numFiles", files.len() as u64)
                .raw("filenames", "[]")
                .s("content", &content)
                .n("numLines", files.len() as u64)
                .done();
            (input, content, result)
        };
        Call {
            tool: "Grep".to_string(),
            input,
            content: jstr(&content),
            tool_use_result: result,
            error: false,
            ms: self.rng.range(40, 900),
            gate: Gate::Never,
            risky: None,
            long: false,
            bash: false,
        }
    }

    pub(super) fn edit_call(&mut self, file: Option<String>) -> Call {
        let file = file.unwrap_or_else(|| self.file());
        let path = self.absolute(&file);
        let (start, lines) = self.snippet(8);
        let old = lines
            .iter()
            .copied()
            .find(|l| l.trim().len() > 3)
            .unwrap_or("}");
        let addition = *self.rng.pick(self.stack.additions);
        let indent: String = old.chars().take_while(|c| c.is_whitespace()).collect();
        let new = format!("{old}\n{indent}{}", addition.trim_start());
        let input = Obj::new()
            .s("file_path", &path)
            .s("old_string", old)
            .s("new_string", &new)
            .done();
        if self.rng.chance(0.03) {
            let text = format!(
                "<tool_use_error>String to replace not found in file.\nString: {old}</tool_use_error>"
            );
            return self.failed("Edit", input, &text, 20, Gate::Never);
        }
        let original = lines.join("\n");
        let snippet = number_lines(start, &lines);
        let content = format!(
            "The file {path} has been updated. Here's the result of running `cat -n` on a snippet \
             of the edited file:\n{snippet}"
        );
        let patch_lines = format!(
            "[{},{}]",
            jstr(&format!("-{old}")),
            jstr(&format!("+{new}"))
        );
        let patch = Obj::new()
            .n("oldStart", start)
            .n("oldLines", 1)
            .n("newStart", start)
            .n("newLines", 2)
            .raw("lines", &patch_lines)
            .done();
        let result = Obj::new()
            .s("filePath", &path)
            .s("oldString", old)
            .s("newString", &new)
            .s("originalFile", &original)
            .raw("structuredPatch", &format!("[{patch}]"))
            .b("userModified", false)
            .b("replaceAll", false)
            .done();
        Call {
            tool: "Edit".to_string(),
            input,
            content: jstr(&content),
            tool_use_result: result,
            error: false,
            ms: self.rng.range(20, 200),
            gate: Gate::Edits,
            risky: None,
            long: false,
            bash: false,
        }
    }

    pub(super) fn write_call(&mut self) -> Call {
        let template = *self.rng.pick(self.stack.new_files);
        let file = self.fill(template);
        let path = self.absolute(&file);
        let count = self.rng.range(8, 20);
        let (_, lines) = self.snippet(count);
        let body = lines.join("\n");
        let input = Obj::new().s("file_path", &path).s("content", &body).done();
        let result = Obj::new()
            .s("type", "create")
            .s("filePath", &path)
            .s("content", &body)
            .raw("structuredPatch", "[]")
            .raw("originalFile", "null")
            .done();
        Call {
            tool: "Write".to_string(),
            input,
            content: jstr(&format!("File created successfully at: {path}")),
            tool_use_result: result,
            error: false,
            ms: self.rng.range(20, 200),
            gate: Gate::Edits,
            risky: None,
            long: false,
            bash: false,
        }
    }

    /// One of `cmds`, run successfully.
    pub(super) fn any_of(&mut self, cmds: &'static [Cmd]) -> Call {
        let cmd = self.rng.pick(cmds);
        self.bash_ok(cmd)
    }

    pub(super) fn bash_ok(&mut self, cmd: &Cmd) -> Call {
        let command = self.fill(cmd.command);
        let output = self.fill(cmd.output);
        let ms = self
            .rng
            .range(cmd.seconds.0 * 1000 + 40, cmd.seconds.1 * 1000 + 400);
        let long = cmd.seconds.1 >= 20;
        self.bash(&command, cmd.description, &output, ms, long)
    }

    pub(super) fn bash(
        &mut self,
        command: &str,
        description: &str,
        output: &str,
        ms: u64,
        long: bool,
    ) -> Call {
        let input = Obj::new()
            .s("command", command)
            .s("description", description)
            .done();
        let result = Obj::new()
            .s("stdout", output)
            .s("stderr", "")
            .b("interrupted", false)
            .b("isImage", false)
            .done();
        Call {
            tool: "Bash".to_string(),
            input,
            content: jstr(output),
            tool_use_result: result,
            error: false,
            ms,
            gate: Gate::Always,
            risky: None,
            long,
            bash: true,
        }
    }

    pub(super) fn bash_fail(&mut self, cmd: &Cmd, failure: &Failure) -> Call {
        let command = self.fill(cmd.command);
        let text = format!("Exit code {}\n{}", failure.code, self.fill(failure.output));
        let input = Obj::new()
            .s("command", &command)
            .s("description", cmd.description)
            .done();
        let ms = self
            .rng
            .range(cmd.seconds.0 * 1000 + 40, cmd.seconds.1 * 1000 + 400);
        let mut call = self.failed("Bash", input, &text, ms, Gate::Always);
        call.long = cmd.seconds.1 >= 20;
        call.bash = true;
        call
    }

    /// A call that fails: `is_error`, and `toolUseResult` is the text after `Error: `.
    pub(super) fn failed(
        &mut self,
        tool: &str,
        input: String,
        text: &str,
        ms: u64,
        gate: Gate,
    ) -> Call {
        let plain = text
            .strip_prefix("<tool_use_error>")
            .and_then(|t| t.strip_suffix("</tool_use_error>"))
            .unwrap_or(text);
        Call {
            tool: tool.to_string(),
            input,
            content: jstr(text),
            tool_use_result: jstr(&format!("Error: {plain}")),
            error: true,
            ms,
            gate,
            risky: None,
            long: false,
            bash: false,
        }
    }

    pub(super) fn web_call(&mut self, url: &str, topic: &str) -> Call {
        let prompt = format!("Summarise what this page says about {topic}.");
        let input = Obj::new().s("url", url).s("prompt", &prompt).done();
        if self.rng.chance(0.06) {
            return self.failed(
                "WebFetch",
                input,
                "Request failed with status code 404",
                900,
                Gate::Always,
            );
        }
        let text = format!(
            "The page covers {topic}: configure it once at construction, prefer the documented \
             defaults, and handle the timeout error separately from other failures."
        );
        let result = Obj::new()
            .n("bytes", self.rng.range(20_000, 400_000))
            .n("code", 200)
            .s("codeText", "OK")
            .s("result", &text)
            .n("durationMs", self.rng.range(800, 6_000))
            .s("url", url)
            .done();
        let ms = self.rng.range(1_000, 9_000);
        Call {
            tool: "WebFetch".to_string(),
            input,
            content: jstr(&text),
            tool_use_result: result,
            error: false,
            ms,
            gate: Gate::Always,
            risky: None,
            long: ms > 6_000,
            bash: false,
        }
    }

    pub(super) fn mcp_call(&mut self, tool: &str, input: String, text: &str) -> Call {
        let block = Obj::new().s("type", "text").s("text", text).done();
        Call {
            tool: tool.to_string(),
            input,
            content: format!("[{block}]"),
            tool_use_result: format!("[{block}]"),
            error: false,
            ms: self.rng.range(400, 3_000),
            gate: Gate::Always,
            risky: None,
            long: false,
            bash: false,
        }
    }

    pub(super) fn task_call(&mut self, topic: &str) -> Call {
        let description = format!("Map {topic}");
        let prompt = format!(
            "Find every place in {} that handles {topic}. Report file paths, function names and \
             how they call each other. Do not change anything.",
            self.project.root
        );
        let input = Obj::new()
            .s("description", &description)
            .s("prompt", &prompt)
            .s("subagent_type", "Explore")
            .done();
        let report = format!(
            "{topic} is handled in {} (entry point) and {} (the I/O); the first calls the second \
             through one function.",
            self.file(),
            self.file()
        );
        let block = Obj::new().s("type", "text").s("text", &report).done();
        let ms = self.rng.range(25_000, 240_000);
        let result = Obj::new()
            .s("status", "completed")
            .s("prompt", &prompt)
            .s("agentId", &hex(self.rng, 8))
            .raw("content", &format!("[{block}]"))
            .n("totalDurationMs", ms)
            .n("totalTokens", self.rng.range(8_000, 60_000))
            .n("totalToolUseCount", self.rng.range(4, 30))
            .done();
        Call {
            tool: "Task".to_string(),
            input,
            content: format!("[{block}]"),
            tool_use_result: result,
            error: false,
            ms,
            gate: Gate::Never,
            risky: None,
            long: true,
            bash: false,
        }
    }

    pub(super) fn todo_call(&mut self, what: &str) -> Call {
        let todos = [
            format!("Read the code around {what}"),
            format!("Implement {what}"),
            "Add tests".to_string(),
            "Run the build, tests and linter".to_string(),
        ];
        let items: Vec<String> = todos
            .iter()
            .enumerate()
            .map(|(i, t)| {
                Obj::new()
                    .s("content", t)
                    .s("status", if i == 0 { "in_progress" } else { "pending" })
                    .s("activeForm", t)
                    .done()
            })
            .collect();
        let list = format!("[{}]", items.join(","));
        let input = Obj::new().raw("todos", &list).done();
        let result = Obj::new()
            .raw("oldTodos", "[]")
            .raw("newTodos", &list)
            .done();
        Call {
            tool: "TodoWrite".to_string(),
            input,
            content: jstr(
                "Todos have been modified successfully. Ensure that you continue to use the todo \
                 list to track your progress. Please proceed with the current tasks if applicable",
            ),
            tool_use_result: result,
            error: false,
            ms: self.rng.range(5, 40),
            gate: Gate::Never,
            risky: None,
            long: false,
            bash: false,
        }
    }

    pub(super) fn risky(&mut self, risky: &'static Risky) -> Call {
        let target = self.fill(risky.target);
        let output = self.fill(risky.output);
        let mut call = match risky.tool {
            RiskyTool::Bash => self.bash(&target, risky.description, &output, 1_500, false),
            RiskyTool::Read => {
                let input = Obj::new().s("file_path", &target).done();
                let lines: Vec<&str> = output.lines().collect();
                let file_obj = Obj::new()
                    .s("filePath", &target)
                    .s("content", &output)
                    .n("numLines", lines.len() as u64)
                    .n("startLine", 1)
                    .n("totalLines", lines.len() as u64)
                    .done();
                Call {
                    tool: "Read".to_string(),
                    input,
                    content: jstr(&number_lines(1, &lines)),
                    tool_use_result: Obj::new().s("type", "text").raw("file", &file_obj).done(),
                    error: false,
                    ms: 30,
                    gate: Gate::Always,
                    risky: None,
                    long: false,
                    bash: false,
                }
            }
            RiskyTool::Edit => {
                let old = "export PATH=\"$HOME/.local/bin:$PATH\"";
                let new = format!(
                    "{old}\nexport PATH=\"$HOME/.cargo/bin:$HOME/go/bin:$PATH\"\nexport {}_ENV=dev",
                    self.project.package.to_uppercase()
                );
                let input = Obj::new()
                    .s("file_path", &target)
                    .s("old_string", old)
                    .s("new_string", &new)
                    .done();
                let result = Obj::new()
                    .s("filePath", &target)
                    .s("oldString", old)
                    .s("newString", &new)
                    .s("originalFile", old)
                    .raw("structuredPatch", "[]")
                    .b("userModified", false)
                    .b("replaceAll", false)
                    .done();
                Call {
                    tool: "Edit".to_string(),
                    input,
                    content: jstr(&format!("The file {target} has been updated.")),
                    tool_use_result: result,
                    error: false,
                    ms: 40,
                    gate: Gate::Always,
                    risky: None,
                    long: false,
                    bash: false,
                }
            }
        };
        call.gate = Gate::Always;
        call.risky = Some(risky);
        call
    }
}
