//! The parser: tokens to a flat inventory of simple commands, in the order they would run.
//!
//! Not a syntax tree: what the engine needs is every command that may run and the context it
//! runs in (a loop, a condition, a subshell, a pipeline, the background). Substitutions are
//! parsed recursively and listed before the command whose words contain them, because they run
//! first. Case patterns and `for` headers are skipped (they are not programs); their
//! substitutions are still listed.

use super::MAX_DEPTH;
use super::lex::{Lexed, Op, Redirect, Token, Word, lex};

/// Where a simple command sits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Surroundings {
    /// Nesting of substitutions and nested shells (0 at the top).
    pub depth: usize,
    /// Inside a loop body: it may run many times.
    pub in_loop: bool,
    /// Inside a condition, a branch, after `||`, or in a function body: it may or may not run.
    pub conditional: bool,
    /// Inside `( … )`, a substitution or a pipeline stage: `cd` does not leak out.
    pub isolated: bool,
    /// Run with `&`.
    pub background: bool,
    /// The commands (a range of indexes in the same inventory) of the pipeline stage piping
    /// into this one: one simple command, or every command of a compound stage.
    pub piped_from: Option<(usize, usize)>,
}

/// One simple command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Leading `NAME=value` words.
    pub assignments: Vec<(String, Word)>,
    /// The program and its arguments.
    pub words: Vec<Word>,
    /// Redirections, with targets.
    pub redirects: Vec<Redirect>,
    /// Where it sits.
    pub surroundings: Surroundings,
}

/// The inventory of a source text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// Every simple command, in execution order.
    pub commands: Vec<SimpleCommand>,
    /// What the parser could not account for.
    pub problems: Vec<String>,
}

/// Parses `source` at nesting `depth`.
pub fn parse(source: &str, depth: usize) -> Script {
    let mut script = Script::default();
    if depth > MAX_DEPTH {
        script
            .problems
            .push(format!("nested more than {MAX_DEPTH} levels deep"));
        return script;
    }
    let Lexed { tokens, problems } = lex(source);
    script.problems = problems;
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth,
        script,
        frames: Vec::new(),
        after_or: false,
        pipe_from: None,
        last_stage: None,
    };
    parser.run();
    if !parser.frames.is_empty() {
        parser
            .script
            .problems
            .push("unclosed compound command".to_string());
    }
    parser.script
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    If,
    Loop,
    Case,
    Group,
    Subshell,
    Function,
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
    script: Script,
    /// Open compound commands, each with the index of its first command.
    frames: Vec<(Frame, usize)>,
    after_or: bool,
    pipe_from: Option<(usize, usize)>,
    /// The commands of the last pipeline stage read: a simple command, or a compound that
    /// just closed (whose trailing redirections apply to all of it).
    last_stage: Option<((usize, usize), bool)>,
}

enum Step {
    Control(Op),
    Arith(Word),
    Keyword(&'static str),
    FunctionDefinition,
    Simple,
}

const RESERVED: &[&str] = &[
    "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "for", "select", "case",
    "esac", "function", "{", "}", "!", "in", "coproc", "time", "[[",
];

fn reserved(word: &Word) -> Option<&'static str> {
    if word.quoted {
        return None;
    }
    RESERVED.iter().find(|r| **r == word.text).copied()
}

fn is_assignment(word: &Word) -> Option<(String, Word)> {
    // By byte: the first word of every command is asked, and a word is short.
    let eq = word.raw().bytes().position(|b| b == b'=')?;
    let name = word.raw().get(..eq)?;
    let name = name.strip_suffix('+').unwrap_or(name);
    let valid = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return None;
    }
    let value_text = word.text.get(word.text.find('=')? + 1..)?.to_string();
    let mut value = Word::new(
        value_text,
        word.raw().get(eq + 1..).unwrap_or("").to_string(),
    );
    value.quoted = word.quoted;
    value.substitutions = word.substitutions.clone();
    Some((name.to_string(), value))
}

impl Parser {
    fn surroundings(&self) -> Surroundings {
        Surroundings {
            depth: self.depth,
            in_loop: self.has_frame(Frame::Loop),
            conditional: self.after_or
                || self.frames.iter().any(|(f, _)| {
                    matches!(f, Frame::If | Frame::Case | Frame::Function | Frame::Loop)
                }),
            isolated: self.depth > 0 || self.has_frame(Frame::Subshell) || self.pipe_from.is_some(),
            background: false,
            piped_from: self.pipe_from,
        }
    }

    fn problem(&mut self, text: &str) {
        self.script.problems.push(text.to_string());
    }

    fn has_frame(&self, frame: Frame) -> bool {
        self.frames.iter().any(|(f, _)| *f == frame)
    }

    fn top_frame(&self) -> Option<Frame> {
        self.frames.last().map(|(f, _)| *f)
    }

    fn open(&mut self, frame: Frame) {
        self.frames.push((frame, self.script.commands.len()));
        self.last_stage = None;
    }

    /// Lists the commands of substitutions inside `word` before the command that holds it.
    fn substitutions_of(&mut self, word: &Word) {
        for substitution in &word.substitutions {
            let inner = parse(&substitution.source, self.depth + 1);
            self.absorb(inner);
        }
    }

    fn absorb(&mut self, inner: Script) {
        let offset = self.script.commands.len();
        let outer = self.surroundings();
        for mut command in inner.commands {
            command.surroundings.in_loop |= outer.in_loop;
            command.surroundings.conditional |= outer.conditional;
            command.surroundings.isolated = true;
            command.surroundings.piped_from = command
                .surroundings
                .piped_from
                .map(|(a, b)| (a + offset, b + offset));
            self.script.commands.push(command);
        }
        self.script.problems.extend(inner.problems);
    }

    fn run(&mut self) {
        while let Some(token) = self.tokens.get(self.pos) {
            let step = match token {
                Token::Op(op) => Step::Control(*op),
                Token::Arith(word) => Step::Arith(word.clone()),
                Token::Word(word) => match reserved(word) {
                    Some(keyword) => Step::Keyword(keyword),
                    // `name() …` defines a function; `a=()` is an empty array.
                    None if !word.raw().ends_with('=')
                        && matches!(self.tokens.get(self.pos + 1), Some(Token::Op(Op::LParen)))
                        && matches!(self.tokens.get(self.pos + 2), Some(Token::Op(Op::RParen))) =>
                    {
                        Step::FunctionDefinition
                    }
                    None => Step::Simple,
                },
                Token::Redirect(_) => Step::Simple,
            };
            match step {
                Step::Control(op) => {
                    self.pos += 1;
                    self.control(op);
                }
                Step::Arith(word) => {
                    self.pos += 1;
                    self.substitutions_of(&word);
                }
                Step::Keyword(keyword) => {
                    self.pos += 1;
                    self.keyword(keyword);
                }
                Step::FunctionDefinition => {
                    // `name() body`: the body's commands run only if called.
                    self.pos += 3;
                    self.open(Frame::Function);
                    self.skip_newlines();
                }
                Step::Simple => self.simple_command(),
            }
        }
    }

    /// After `name()` or `function name`: newlines may stand before the body. The body's own
    /// frame (`{` or `(`) nests inside the function's, and closing it closes both; its commands
    /// are recorded as conditional (they run only if called).
    fn skip_newlines(&mut self) {
        while matches!(self.tokens.get(self.pos), Some(Token::Op(Op::Newline))) {
            self.pos += 1;
        }
    }

    fn close_frame(&mut self, expected: &[Frame]) {
        match self.frames.last().copied() {
            Some((frame, start)) if expected.contains(&frame) => {
                self.frames.pop();
                let mut start = start;
                if self.top_frame() == Some(Frame::Function)
                    && let Some((_, function_start)) = self.frames.pop()
                {
                    start = function_start;
                }
                self.last_stage = Some(((start, self.script.commands.len()), true));
            }
            _ => self.problem("unbalanced compound command"),
        }
    }

    fn control(&mut self, op: Op) {
        match op {
            Op::AndIf | Op::Semi | Op::Newline => {
                self.pipe_from = None;
                if op != Op::AndIf {
                    self.after_or = false;
                }
            }
            Op::OrIf => {
                self.pipe_from = None;
                self.after_or = true;
            }
            Op::Pipe | Op::PipeAll => {
                self.pipe_from = self.last_stage.map(|(range, _)| range);
                // Every stage of a pipeline runs in a subshell of its own.
                if let Some((start, end)) = self.pipe_from {
                    for command in self.script.commands.iter_mut().take(end).skip(start) {
                        command.surroundings.isolated = true;
                    }
                }
            }
            Op::Background => {
                if let Some(last) = self.script.commands.last_mut() {
                    last.surroundings.background = true;
                }
                self.pipe_from = None;
            }
            Op::LParen => self.open(Frame::Subshell),
            Op::RParen => {
                if self.top_frame() == Some(Frame::Case) {
                    // The `)` ending a case pattern list is consumed by `case_patterns`.
                    self.problem("stray `)` in case");
                } else {
                    self.close_frame(&[Frame::Subshell]);
                }
            }
            Op::CaseBreak => {
                if self.top_frame() == Some(Frame::Case) {
                    self.case_patterns();
                } else {
                    self.problem("`;;` outside case");
                }
            }
        }
    }

    fn keyword(&mut self, keyword: &str) {
        match keyword {
            "if" => self.open(Frame::If),
            "fi" => self.close_frame(&[Frame::If]),
            "while" | "until" => self.open(Frame::Loop),
            "done" => self.close_frame(&[Frame::Loop]),
            "time" => {
                // `time -p cmd`: the option belongs to the keyword.
                if matches!(self.tokens.get(self.pos), Some(Token::Word(w)) if w.text == "-p") {
                    self.pos += 1;
                }
            }
            "then" | "elif" | "else" | "do" | "!" | "in" => {}
            "{" => self.open(Frame::Group),
            "[[" => self.conditional_expression(),
            "}" => self.close_frame(&[Frame::Group]),
            "for" | "select" => {
                self.open(Frame::Loop);
                // Header: NAME [in WORDS…] up to `;`, newline or `do`. `for ((…))` arrives as Arith.
                while let Some(token) = self.tokens.get(self.pos).cloned() {
                    match token {
                        Token::Word(w) if reserved(&w) == Some("do") => break,
                        Token::Op(Op::Semi) | Token::Op(Op::Newline) => break,
                        Token::Word(w) | Token::Arith(w) => {
                            self.substitutions_of(&w);
                            self.pos += 1;
                        }
                        _ => {
                            self.problem("unexpected token in for header");
                            self.pos += 1;
                        }
                    }
                }
            }
            "case" => {
                self.open(Frame::Case);
                if let Some(Token::Word(subject)) = self.tokens.get(self.pos).cloned() {
                    self.substitutions_of(&subject);
                    self.pos += 1;
                }
                while matches!(self.tokens.get(self.pos), Some(Token::Op(Op::Newline))) {
                    self.pos += 1;
                }
                match self.tokens.get(self.pos) {
                    Some(Token::Word(w)) if reserved(w) == Some("in") => self.pos += 1,
                    _ => self.problem("case without `in`"),
                }
                self.case_patterns();
            }
            "esac" => self.close_frame(&[Frame::Case]),
            "function" => {
                if matches!(self.tokens.get(self.pos), Some(Token::Word(_))) {
                    self.pos += 1;
                }
                if matches!(self.tokens.get(self.pos), Some(Token::Op(Op::LParen)))
                    && matches!(self.tokens.get(self.pos + 1), Some(Token::Op(Op::RParen)))
                {
                    self.pos += 2;
                }
                self.open(Frame::Function);
                self.skip_newlines();
            }
            "coproc" => {
                self.problem("coproc is not analysed");
            }
            _ => {}
        }
    }

    /// Skips case patterns up to their `)`, or consumes `esac`.
    fn case_patterns(&mut self) {
        loop {
            match self.tokens.get(self.pos).cloned() {
                Some(Token::Op(Op::Newline)) => self.pos += 1,
                Some(Token::Word(w)) if reserved(&w) == Some("esac") => return,
                Some(Token::Op(Op::LParen)) => self.pos += 1,
                _ => break,
            }
        }
        while let Some(token) = self.tokens.get(self.pos).cloned() {
            self.pos += 1;
            match token {
                Token::Op(Op::RParen) => return,
                Token::Word(w) => self.substitutions_of(&w),
                Token::Op(Op::Pipe) => {}
                _ => {
                    self.problem("unexpected token in case pattern");
                    return;
                }
            }
        }
        self.problem("unterminated case pattern");
    }

    /// `[[ … ]]`: a test, not commands; `(`, `)` and `|` inside are part of the expression.
    /// Recorded as one command named `[[` so its substitutions still run first.
    fn conditional_expression(&mut self) {
        let mut command = SimpleCommand {
            surroundings: self.surroundings(),
            words: vec![Word::plain("[[")],
            ..SimpleCommand::default()
        };
        while let Some(token) = self.tokens.get(self.pos).cloned() {
            self.pos += 1;
            match token {
                Token::Word(w) if !w.quoted && w.text == "]]" => {
                    self.finish(command);
                    return;
                }
                Token::Word(w) => {
                    self.substitutions_of(&w);
                    command.words.push(w);
                }
                Token::Redirect(r) => {
                    // `<` and `>` compare strings inside `[[ ]]`; the operand still expands.
                    self.substitutions_of(&r.target);
                    command.words.push(r.target);
                }
                Token::Arith(w) => self.substitutions_of(&w),
                Token::Op(Op::Newline) => break,
                _ => {}
            }
        }
        self.problem("unterminated [[");
    }

    fn simple_command(&mut self) {
        // Sized for the tokens up to the next operator (an upper bound on its words).
        let upto_operator = self
            .tokens
            .get(self.pos..)
            .unwrap_or(&[])
            .iter()
            .take_while(|t| !matches!(t, Token::Op(_)))
            .count();
        let mut command = SimpleCommand {
            surroundings: self.surroundings(),
            words: Vec::with_capacity(upto_operator),
            ..SimpleCommand::default()
        };
        while let Some(next) = self.tokens.get_mut(self.pos) {
            if matches!(next, Token::Op(_)) {
                break;
            }
            // Tokens are read once, front to back: take them instead of cloning.
            let token = std::mem::replace(next, Token::Op(Op::Newline));
            self.pos += 1;
            match token {
                Token::Word(word) => {
                    self.substitutions_of(&word);
                    // Only a word before the program can be an assignment.
                    let assignment = if command.words.is_empty() {
                        is_assignment(&word)
                    } else {
                        None
                    };
                    match assignment {
                        Some(assignment) => {
                            let array = assignment.1.raw().is_empty()
                                && matches!(self.tokens.get(self.pos), Some(Token::Op(Op::LParen)));
                            if array {
                                self.array_value();
                            }
                            command.assignments.push(assignment);
                        }
                        None => command.words.push(word),
                    }
                }
                Token::Redirect(redirect) => {
                    self.substitutions_of(&redirect.target);
                    command.redirects.push(redirect);
                }
                Token::Arith(word) => self.substitutions_of(&word),
                Token::Op(_) => break,
            }
        }
        // Redirections right after a compound (`{ …; } 2>/dev/null`) apply to all of it.
        if command.words.is_empty()
            && command.assignments.is_empty()
            && let Some(((start, end), true)) = self.last_stage
        {
            for inner in self.script.commands.iter_mut().take(end).skip(start) {
                inner.redirects.extend(command.redirects.iter().cloned());
            }
            return;
        }
        self.finish(command);
    }

    /// `name=(a b $(c))`: the elements are values, not commands; substitutions still run.
    fn array_value(&mut self) {
        self.pos += 1;
        while let Some(token) = self.tokens.get(self.pos).cloned() {
            self.pos += 1;
            match token {
                Token::Op(Op::RParen) => return,
                Token::Word(w) => self.substitutions_of(&w),
                Token::Op(Op::Newline) => {}
                _ => {
                    self.problem("unexpected token in an array value");
                    return;
                }
            }
        }
        self.problem("unterminated array value");
    }

    fn finish(&mut self, mut command: SimpleCommand) {
        // Substitutions were listed while reading; the command itself runs after them.
        command.surroundings.piped_from = self.pipe_from;
        let index = self.script.commands.len();
        self.script.commands.push(command);
        self.last_stage = Some(((index, index + 1), false));
    }
}
