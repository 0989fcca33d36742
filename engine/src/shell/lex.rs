//! The tokenizer: POSIX quoting (single, double, ANSI-C `$'…'`), escapes, line continuations,
//! comments, operators, redirections with file-descriptor prefixes, and here-documents.
//!
//! Expansions are never performed. Words record what they contain (substitutions, globs,
//! unresolved variables) so later stages can be pessimistic about them. Only `$HOME` and `$PWD`
//! are resolved, to `~` and `.`, because the roots are known; everything else is [`UNRESOLVED`].

use super::UNRESOLVED;

/// A command or process substitution found inside a word or a here-document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Substitution {
    /// The inner source text, to be parsed on its own.
    pub source: String,
    /// `$(…)`/backticks, or `<(…)`/`>(…)`.
    pub process: bool,
}

/// A word's value: the text the program would see, and whether it holds [`UNRESOLVED`], found
/// once when the text is made rather than searched for each time [`Word::is_literal`] is asked
/// (many questions per word). Read as a `str`; made only here and through [`Word::set_text`],
/// so the two cannot disagree.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Text {
    value: String,
    unresolved: bool,
    /// Needs no quotes in a rule's text ([`super::is_plain`]).
    plain: bool,
}

impl Text {
    fn new(value: String) -> Text {
        let mut text = Text {
            value,
            unresolved: false,
            plain: false,
        };
        text.settle();
        text
    }

    /// Finds what is known of the value: whether it holds [`UNRESOLVED`] and whether it needs
    /// quotes (a plain text holds no `UNRESOLVED`, a private-use character that is neither
    /// ASCII nor alphanumeric: one pass for most words).
    fn settle(&mut self) {
        self.plain = super::is_plain(&self.value);
        self.unresolved = !self.plain && super::holds_unresolved(&self.value);
    }

    /// Needs no quotes in a rule's text: letters and digits (any script) and `-_./=:@%+,^~`.
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.value
    }

    /// The text, owned.
    pub fn into_string(self) -> String {
        self.value
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.value
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.value
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.value
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.value, f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.value)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.value == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.value == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        &self.value == other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.value
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.value
    }
}

/// One shell word after quote removal.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The value the program would see; unknowable parts are [`UNRESOLVED`].
    pub text: Text,
    /// The word as written, when that differs from its value (a plain word, nearly every
    /// word, is written as its value: not kept twice). [`Word::raw`] reads it.
    written: Option<String>,
    /// Any part of it was quoted or escaped.
    pub quoted: bool,
    /// It contains an unquoted glob character (`*`, `?`, `[`) or a brace expansion.
    pub glob: bool,
    /// Substitutions that run when this word is expanded.
    pub substitutions: Vec<Substitution>,
}

/// As it was when the written form was a field of its own: `raw` shown as text.
impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Word")
            .field("text", &self.text.value)
            .field("raw", &self.raw())
            .field("quoted", &self.quoted)
            .field("glob", &self.glob)
            .field("substitutions", &self.substitutions)
            .finish()
    }
}

impl Word {
    /// The value is fully known.
    pub fn is_literal(&self) -> bool {
        !self.text.unresolved
    }

    /// The word as written.
    pub fn raw(&self) -> &str {
        self.written.as_deref().unwrap_or(&self.text.value)
    }

    /// The word is written as its value, and that needs no quotes ([`Text::is_plain`]): its
    /// written form holds none of the shell's quoting or expansion characters (`$`, quotes,
    /// `\`, globs, spaces).
    pub fn raw_is_plain(&self) -> bool {
        self.written.is_none() && self.text.plain
    }

    /// A word that stands for itself: `Word::plain("git")`.
    pub fn plain(text: &str) -> Word {
        Word {
            text: Text::new(text.to_string()),
            ..Word::default()
        }
    }

    /// A word of the given value and written form, neither quoted nor a glob.
    pub fn new(text: String, raw: String) -> Word {
        let written = (raw != text).then_some(raw);
        Word {
            text: Text::new(text),
            written,
            ..Word::default()
        }
    }

    /// Gives the word another value; its written form stays what it was.
    pub fn set_text(&mut self, text: String) {
        if self.written.is_none() && text != self.text.value {
            self.written = Some(std::mem::take(&mut self.text.value));
        } else if self.written.as_deref() == Some(text.as_str()) {
            self.written = None;
        }
        self.text = Text::new(text);
    }

    /// Gives the word another written form; its value stays what it was.
    pub fn set_raw(&mut self, raw: String) {
        self.written = (raw != self.text.value).then_some(raw);
    }
}

/// A control operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Op {
    AndIf,
    OrIf,
    Pipe,
    PipeAll,
    Semi,
    Background,
    Newline,
    LParen,
    RParen,
    CaseBreak,
}

/// A redirection, complete with its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The operator as written, without the descriptor (`>`, `>>`, `&>`, `<`, `<<`, `<<<`, …).
    pub op: String,
    /// The descriptor prefix, if any (`2>`).
    pub fd: Option<u32>,
    /// The target word; for a here-document, its body.
    pub target: Word,
    /// The target is a file (not a descriptor duplication, a here-document or a here-string).
    pub is_file: bool,
}

impl Redirect {
    /// Writes to its target.
    pub fn writes(&self) -> bool {
        self.is_file && (self.op.contains('>'))
    }
}

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Token {
    Word(Word),
    Op(Op),
    Redirect(Redirect),
    /// `(( … ))`: an arithmetic command; nothing runs unless it holds a substitution.
    Arith(Word),
}

/// The tokens of a source text, and what could not be accounted for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lexed {
    /// The tokens in order.
    pub tokens: Vec<Token>,
    /// Problems; any problem makes the whole command not understood.
    pub problems: Vec<String>,
}

/// Tokenizes `source`.
pub fn lex(source: &str) -> Lexed {
    if source.is_ascii() {
        run(Lexer::new(Ascii(source), source.len()))
    } else {
        let chars: Vec<char> = source.chars().collect();
        run(Lexer::new(chars.as_slice(), source.len()))
    }
}

fn run<C: Chars>(mut lexer: Lexer<C>) -> Lexed {
    lexer.run();
    lexer.out
}

/// The source as the lexer reads it, a character per position: an ASCII source (nearly every
/// command) as its bytes, read in place; any other as its characters, collected once. The
/// lexer is compiled for each, so reading a position is one load either way (a copy of every
/// source into characters had cost more than the branch a shared reader would take per read).
trait Chars: Copy {
    /// The character at `at`.
    fn at(self, at: usize) -> Option<char>;
    /// How many characters.
    fn count(self) -> usize;
    /// The first position from `from` whose character is `stop`'s.
    fn find_from(self, from: usize, stop: impl Fn(char) -> bool) -> Option<usize>;
    /// Appends the characters from `from` to `to`.
    fn push_range(self, out: &mut String, from: usize, to: usize);
    /// The characters from `from` to `to` are `text`.
    fn range_is(self, from: usize, to: usize, text: &str) -> bool;
    /// The end of the run of ordinary characters ([`ORDINARY_ASCII`], and every character
    /// outside ASCII) after `from` (the character at `from` is taken as it is), and whether
    /// the run from `from` needs no quotes ([`super::is_plain_byte`]), when that is known (of
    /// an ASCII source).
    fn ordinary_run(self, from: usize) -> (usize, Option<bool>);
}

/// An ASCII source: a byte is a character.
#[derive(Clone, Copy)]
struct Ascii<'s>(&'s str);

impl Chars for Ascii<'_> {
    fn at(self, at: usize) -> Option<char> {
        self.0.as_bytes().get(at).map(|b| char::from(*b))
    }

    fn count(self) -> usize {
        self.0.len()
    }

    fn find_from(self, from: usize, stop: impl Fn(char) -> bool) -> Option<usize> {
        self.0
            .as_bytes()
            .get(from..)?
            .iter()
            .position(|b| stop(char::from(*b)))
            .map(|at| from + at)
    }

    fn push_range(self, out: &mut String, from: usize, to: usize) {
        out.push_str(self.0.get(from..to.min(self.0.len())).unwrap_or_default());
    }

    fn range_is(self, from: usize, to: usize, text: &str) -> bool {
        self.0.get(from..to) == Some(text)
    }

    fn ordinary_run(self, from: usize) -> (usize, Option<bool>) {
        let bytes = self.0.as_bytes();
        let mut plain = bytes.get(from).is_some_and(|b| super::is_plain_byte(*b));
        let mut end = from + 1;
        while let Some(&b) = bytes.get(end) {
            if !ORDINARY_ASCII.get(usize::from(b)).copied().unwrap_or(true) {
                break;
            }
            plain &= super::is_plain_byte(b);
            end += 1;
        }
        (end, Some(plain))
    }
}

impl Chars for &[char] {
    fn at(self, at: usize) -> Option<char> {
        self.get(at).copied()
    }

    fn count(self) -> usize {
        self.len()
    }

    fn find_from(self, from: usize, stop: impl Fn(char) -> bool) -> Option<usize> {
        self.get(from..)?
            .iter()
            .position(|c| stop(*c))
            .map(|at| from + at)
    }

    fn push_range(self, out: &mut String, from: usize, to: usize) {
        out.extend(self.get(from..to.min(self.len())).unwrap_or(&[]).iter());
    }

    fn range_is(self, from: usize, to: usize, text: &str) -> bool {
        self.get(from..to)
            .is_some_and(|range| range.iter().copied().eq(text.chars()))
    }

    fn ordinary_run(self, from: usize) -> (usize, Option<bool>) {
        let ordinary = |c: char| ORDINARY_ASCII.get(c as usize).copied().unwrap_or(true);
        let end = self
            .find_from(from + 1, |c| !ordinary(c))
            .unwrap_or(self.count().max(from + 1));
        (end, None)
    }
}

struct PendingHeredoc {
    token_index: usize,
    delimiter: String,
    strip_tabs: bool,
    expand: bool,
}

struct Lexer<C> {
    chars: C,
    pos: usize,
    out: Lexed,
    pending_heredocs: Vec<PendingHeredoc>,
}

/// The substitutions of a text scanned by `inner` ([`Lexer::scan_nested_substitutions`]), added
/// to `word`; returns the problems met.
fn scan_substitutions<C: Chars>(mut inner: Lexer<C>, word: &mut Word) -> Vec<String> {
    while let Some(c) = inner.peek() {
        match c {
            '\\' => inner.pos += 2,
            '$' if inner.peek_at(1) == Some('(') => {
                let mut scratch = Word::default();
                inner.read_dollar(&mut scratch);
                word.substitutions.append(&mut scratch.substitutions);
            }
            '`' => {
                let mut scratch = Word::default();
                inner.read_backtick(&mut scratch);
                word.substitutions.append(&mut scratch.substitutions);
            }
            _ => inner.pos += 1,
        }
    }
    inner.out.problems
}

/// An extended glob's text as the brace-and-star glob that matches at least what it matches,
/// so placement sees every alternative: `@(a|b)` is `{a,b}`, `?(a|b)` is `{,a,b}`, `+(a|b)` is
/// `{a,b}*`, and `!(…)`, `*(…)` or anything nested is `{*,.*}`.
fn push_extglob(text: &mut String, kind: char, body: &str) {
    let plain = !body.contains(['(', ')', '{', '}', ',', '\'', '"', '\\', '$', '`']);
    let alternatives: Vec<&str> = body.split('|').collect();
    if plain && alternatives.len() == 1 && matches!(kind, '@' | '+') {
        // `{a}` is no brace expansion: `@(a)` is `a`, `+(a)` is `a*`.
        text.push_str(body);
        if kind == '+' {
            text.push('*');
        }
        return;
    }
    match kind {
        '@' | '?' | '+' if plain => {
            text.push('{');
            if kind == '?' {
                text.push(',');
            }
            for (i, alternative) in alternatives.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(alternative);
            }
            text.push('}');
            if kind == '+' {
                text.push('*');
            }
        }
        // `!(README.md)` matches dotfiles too when dotglob is on, so `.*` is among what it may be.
        _ => text.push_str("{*,.*}"),
    }
}

/// The ASCII characters a word takes as they are (not meta, no quoting, expansion or glob):
/// the runs [`Lexer::ordinary_run_end`] finds. Every other character is ordinary.
#[allow(clippy::indexing_slicing)] // compile time only
static ORDINARY_ASCII: [bool; 128] = {
    let mut table = [false; 128];
    let mut b = 0u8;
    while b < 128 {
        let c = b as char;
        table[b as usize] =
            !is_meta(c) && !matches!(c, '\\' | '\'' | '"' | '$' | '`' | '*' | '?' | '[' | '{');
        b += 1;
    }
    table
};

const fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')'
    )
}

impl<C: Chars> Lexer<C> {
    /// A lexer of `chars`, a source of `bytes` bytes.
    fn new(chars: C, bytes: usize) -> Lexer<C> {
        Lexer {
            chars,
            pos: 0,
            // Sized for a token every few bytes (bounded): grown from empty, the list of tokens
            // was copied several times per command.
            out: Lexed {
                tokens: Vec::with_capacity((bytes / 5 + 2).min(512)),
                ..Lexed::default()
            },
            pending_heredocs: Vec::new(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.at(self.pos)
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.at(self.pos + offset)
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn problem(&mut self, text: &str) {
        self.out.problems.push(text.to_string());
    }

    fn run(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\n' => {
                    self.pos += 1;
                    self.out.tokens.push(Token::Op(Op::Newline));
                    self.read_heredoc_bodies();
                }
                _ => self.read_token(),
            }
        }
        if !self.pending_heredocs.is_empty() {
            self.problem("here-document without a body");
        }
    }

    fn push_op(&mut self, op: Op, width: usize) {
        self.pos += width;
        self.out.tokens.push(Token::Op(op));
    }

    fn read_token(&mut self) {
        // Most tokens are words starting with a character no test below is about (a digit, an
        // operator's or a redirection's): read as a word at once.
        if self.peek().is_some_and(|c| {
            !c.is_ascii_digit() && !matches!(c, '(' | ')' | '<' | '>' | ';' | '&' | '|')
        }) {
            let word = self.read_word();
            self.out.tokens.push(Token::Word(word));
            return;
        }
        // A descriptor prefix: digits immediately followed by `<` or `>`.
        let mut digits = 0;
        while self.peek_at(digits).is_some_and(|c| c.is_ascii_digit()) {
            digits += 1;
        }
        if digits > 0 && matches!(self.peek_at(digits), Some('<') | Some('>')) {
            let fd = self.slice(self.pos, self.pos + digits);
            self.pos += digits;
            self.read_redirect(fd.parse().ok());
            return;
        }
        if self.starts_with("((") && self.at_command_start() {
            self.read_arith_command();
            return;
        }
        if self.starts_with("<(") || self.starts_with(">(") {
            let word = self.read_word();
            self.out.tokens.push(Token::Word(word));
            return;
        }
        match self.peek() {
            Some(';') if self.starts_with(";;&") => self.push_op(Op::CaseBreak, 3),
            Some(';') if self.starts_with(";;") || self.starts_with(";&") => {
                self.push_op(Op::CaseBreak, 2)
            }
            Some(';') => self.push_op(Op::Semi, 1),
            Some('&') if self.starts_with("&&") => self.push_op(Op::AndIf, 2),
            Some('&') if self.starts_with("&>") => self.read_redirect(None),
            Some('&') => self.push_op(Op::Background, 1),
            Some('|') if self.starts_with("||") => self.push_op(Op::OrIf, 2),
            Some('|') if self.starts_with("|&") => self.push_op(Op::PipeAll, 2),
            Some('|') => self.push_op(Op::Pipe, 1),
            Some('(') => self.push_op(Op::LParen, 1),
            Some(')') => self.push_op(Op::RParen, 1),
            Some('<') | Some('>') => self.read_redirect(None),
            _ => {
                let word = self.read_word();
                self.out.tokens.push(Token::Word(word));
            }
        }
    }

    fn at_command_start(&self) -> bool {
        match self.out.tokens.last() {
            None | Some(Token::Op(_)) => true,
            Some(Token::Word(w)) => {
                !w.quoted
                    && matches!(
                        w.text.as_str(),
                        "do" | "then"
                            | "else"
                            | "{"
                            | "!"
                            | "for"
                            | "if"
                            | "elif"
                            | "while"
                            | "until"
                            | "&&"
                            | "||"
                    )
            }
            _ => false,
        }
    }

    fn read_arith_command(&mut self) {
        let start = self.pos;
        self.pos += 2;
        let mut depth = 1usize;
        while let Some(c) = self.peek() {
            if c == '(' {
                depth += 1;
            } else if c == ')' {
                if depth == 1 && self.peek_at(1) == Some(')') {
                    self.pos += 2;
                    let raw: String = self.slice(start, self.pos);
                    let inner = self.slice(start + 2, self.pos - 2);
                    let mut word = Word::new(UNRESOLVED.to_string(), raw);
                    self.scan_nested_substitutions(&inner, &mut word);
                    self.out.tokens.push(Token::Arith(word));
                    return;
                }
                if depth == 1 {
                    // `((a)||(b))`: not arithmetic but a subshell holding subshells, as bash
                    // reads it. Lex the first `(` as an operator and go on from there.
                    self.pos = start;
                    self.push_op(Op::LParen, 1);
                    return;
                }
                depth = depth.saturating_sub(1);
            }
            self.pos += 1;
        }
        self.problem("unterminated arithmetic command");
    }

    fn slice(&self, from: usize, to: usize) -> String {
        let mut out = String::with_capacity(to.saturating_sub(from));
        self.chars.push_range(&mut out, from, to);
        out
    }

    fn read_redirect(&mut self, fd: Option<u32>) {
        const OPS: [&str; 13] = [
            "<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">|", ">&", "&>", "<", ">", "",
        ];
        let op = OPS
            .iter()
            .find(|op| !op.is_empty() && self.starts_with(op))
            .copied()
            .unwrap_or("");
        if op.is_empty() {
            self.problem("unrecognised redirection");
            self.pos += 1;
            return;
        }
        self.pos += op.chars().count();
        while matches!(self.peek(), Some(' ') | Some('\t')) {
            self.pos += 1;
        }
        if self
            .peek()
            .is_none_or(|c| is_meta(c) && c != '<' && c != '>')
        {
            self.problem("redirection without a target");
            return;
        }
        let target = self.read_word();
        match op {
            "<<" | "<<-" => {
                self.pending_heredocs.push(PendingHeredoc {
                    token_index: self.out.tokens.len(),
                    delimiter: target.text.to_string(),
                    strip_tabs: op == "<<-",
                    expand: !target.quoted,
                });
                self.out.tokens.push(Token::Redirect(Redirect {
                    op: op.to_string(),
                    fd,
                    target: Word::default(),
                    is_file: false,
                }));
            }
            "<<<" => self.out.tokens.push(Token::Redirect(Redirect {
                op: op.to_string(),
                fd,
                target,
                is_file: false,
            })),
            ">&" | "<&" => {
                let dup = target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit());
                // `>&file` is bash for `&>file`.
                let op = if dup || op == "<&" { op } else { "&>" };
                self.out.tokens.push(Token::Redirect(Redirect {
                    op: op.to_string(),
                    fd,
                    target,
                    is_file: !dup,
                }));
            }
            _ => self.out.tokens.push(Token::Redirect(Redirect {
                op: op.to_string(),
                fd,
                target,
                is_file: true,
            })),
        }
    }

    fn read_heredoc_bodies(&mut self) {
        let pending = std::mem::take(&mut self.pending_heredocs);
        for heredoc in pending {
            let mut body = String::new();
            let mut terminated = false;
            while self.peek().is_some() {
                let mut line = String::new();
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    if c == '\n' {
                        break;
                    }
                    line.push(c);
                }
                let compared = if heredoc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if compared == heredoc.delimiter {
                    terminated = true;
                    break;
                }
                body.push_str(compared);
                body.push('\n');
            }
            if !terminated {
                // Bash accepts a here-document ended by end of input; we do too, noting nothing.
            }
            let mut word = Word::new(body.clone(), body.clone());
            word.quoted = !heredoc.expand;
            if heredoc.expand {
                self.scan_nested_substitutions(&body, &mut word);
            }
            if let Some(Token::Redirect(redirect)) = self.out.tokens.get_mut(heredoc.token_index) {
                redirect.target = word;
            }
        }
    }

    /// Finds `$(…)` and backtick substitutions in text that is expanded but not split into words
    /// (here-document bodies, arithmetic).
    fn scan_nested_substitutions(&mut self, text: &str, word: &mut Word) {
        let mut problems = if text.is_ascii() {
            scan_substitutions(Lexer::new(Ascii(text), text.len()), word)
        } else {
            let chars: Vec<char> = text.chars().collect();
            scan_substitutions(Lexer::new(chars.as_slice(), text.len()), word)
        };
        self.out.problems.append(&mut problems);
    }

    /// The `(` at the cursor opens an extended glob: the word so far ends in an unquoted,
    /// unescaped `@ ! + * ?` written right before it.
    fn extglob_opens(&self, word: &Word) -> bool {
        let before = self.pos.checked_sub(1).and_then(|at| self.chars.at(at));
        let escaped = self
            .pos
            .checked_sub(2)
            .and_then(|at| self.chars.at(at))
            .is_some_and(|c| c == '\\');
        before.is_some_and(|c| matches!(c, '@' | '!' | '+' | '*' | '?'))
            && word.text.ends_with(['@', '!', '+', '*', '?'])
            && !escaped
    }

    fn read_word(&mut self) -> Word {
        let start = self.pos;
        let mut word = Word {
            text: Text {
                value: String::with_capacity(24),
                unresolved: false,
                plain: false,
            },
            ..Word::default()
        };
        let at_word_start = |w: &Word| w.text.is_empty() && !w.quoted;
        // The text is only runs of ordinary characters of an ASCII source, and whether each
        // needs quotes: then it holds no `UNRESOLVED` and needs quotes exactly when some run
        // does, known without another pass.
        let (mut runs_only, mut runs_plain) = (true, true);
        while let Some(c) = self.peek() {
            match c {
                '<' | '>' if self.peek_at(1) == Some('(') && at_word_start(&word) => {
                    self.pos += 1;
                    match self.read_balanced_parens() {
                        Some(source) => word.substitutions.push(Substitution {
                            source,
                            process: true,
                        }),
                        None => self.problem("unterminated process substitution"),
                    }
                    word.text.value.push(UNRESOLVED);
                }
                '(' if self.extglob_opens(&word) => {
                    // `@(a|b)`, `!(x)`, `+(…)`, `*(…)`, `?(…)`: an extended glob is part of the
                    // word (bash with extglob), never a subshell.
                    let kind = word.text.value.pop().unwrap_or('@');
                    word.glob = true;
                    match self.read_balanced_parens() {
                        Some(body) => push_extglob(&mut word.text.value, kind, &body),
                        None => {
                            self.problem("unterminated extended glob");
                            word.text.value.push(UNRESOLVED);
                        }
                    }
                }
                c if is_meta(c) => break,
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            word.quoted = true;
                            word.text.value.push(next);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    word.quoted = true;
                    let open = self.pos + 1;
                    let close = self.chars.find_from(open, |c| c == '\'');
                    let end = close.unwrap_or(self.chars.count().max(open));
                    self.push_run(&mut word.text.value, open, end);
                    self.pos = end + 1;
                    if close.is_none() {
                        self.pos = end;
                        self.problem("unterminated single quote");
                    }
                }
                '"' => {
                    word.quoted = true;
                    self.pos += 1;
                    self.read_double_quoted(&mut word);
                }
                '$' if self.peek_at(1) == Some('\'') => {
                    word.quoted = true;
                    self.pos += 2;
                    self.read_ansi_c(&mut word);
                }
                '$' if self.peek_at(1) == Some('"') => {
                    // `$"…"` is a translatable string: a double-quoted string to us.
                    word.quoted = true;
                    self.pos += 2;
                    self.read_double_quoted(&mut word);
                }
                '$' => self.read_dollar(&mut word),
                '`' => self.read_backtick(&mut word),
                '*' | '?' | '[' => {
                    word.glob = true;
                    word.text.value.push(c);
                    self.pos += 1;
                }
                '{' => {
                    // `{a,b}` and `{1..3}` expand to several words.
                    // Look ahead a bounded distance, so a long run of braces stays linear.
                    let from = self.pos + 1;
                    let window_end = self.chars.count().min(from + 256).max(from);
                    if let Some(end) = self
                        .chars
                        .find_from(from, |c| c == '}')
                        .filter(|end| *end < window_end)
                    {
                        let inner = || (from..end).filter_map(|at| self.chars.at(at));
                        let comma = inner().any(|c| c == ',');
                        let range = (from..end).any(|at| {
                            self.chars.at(at) == Some('.')
                                && self.chars.at(at + 1) == Some('.')
                                && at + 1 < end
                        });
                        if !inner().any(|c| c == ' ') && (comma || range) {
                            word.glob = true;
                        }
                    }
                    word.text.value.push(c);
                    self.pos += 1;
                }
                '~' if at_word_start(&word) => {
                    word.text.value.push('~');
                    self.pos += 1;
                }
                _ => {
                    // This character and the ordinary ones after it (each would come back to
                    // this arm: the word is no longer empty, so `~` is ordinary too) go in at
                    // once. The character here is ordinary too (every other one has an arm
                    // above), so the run is read from it, and whether it needs quotes found in
                    // the same pass.
                    let (end, plain) = self.chars.ordinary_run(self.pos);
                    match plain {
                        Some(plain) => runs_plain &= plain,
                        None => runs_only = false,
                    }
                    self.push_run(&mut word.text.value, self.pos, end);
                    self.pos = end;
                    continue;
                }
            }
            // Any other arm may have written the text: it is settled by a pass of its own.
            runs_only = false;
        }
        // The written form is kept only when it differs from the value (compared in place
        // when the source is ASCII: a plain word is not copied a second time).
        // A word of only ordinary runs is its source's text: nothing to compare.
        if !runs_only && !self.chars.range_is(start, self.pos, &word.text.value) {
            word.written = Some(self.slice(start, self.pos));
        }
        if runs_only && !word.text.value.is_empty() {
            word.text.plain = runs_plain;
            word.text.unresolved = false;
        } else {
            word.text.settle();
        }
        word
    }

    /// Appends the characters from `from` to `to` (as one copy when the source is ASCII).
    fn push_run(&self, text: &mut String, from: usize, to: usize) {
        self.chars.push_range(text, from, to);
    }

    fn read_double_quoted(&mut self, word: &mut Word) {
        while let Some(c) = self.peek() {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    let next = self.peek_at(1);
                    match next {
                        Some('\n') => self.pos += 2,
                        Some(n @ ('$' | '`' | '"' | '\\')) => {
                            word.text.value.push(n);
                            self.pos += 2;
                        }
                        _ => {
                            word.text.value.push('\\');
                            self.pos += 1;
                        }
                    }
                }
                '$' => self.read_dollar(word),
                '`' => self.read_backtick(word),
                _ => {
                    word.text.value.push(c);
                    self.pos += 1;
                }
            }
        }
        self.problem("unterminated double quote");
    }

    fn read_ansi_c(&mut self, word: &mut Word) {
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '\'' => {
                    // A NUL ends the word for the program that receives it (C strings).
                    if let Some(at) = word.text.find('\0') {
                        word.text.value.truncate(at);
                    }
                    return;
                }
                '\\' => {
                    let Some(esc) = self.peek() else { break };
                    self.pos += 1;
                    let decoded = match esc {
                        'n' => Some('\n'),
                        't' => Some('\t'),
                        'r' => Some('\r'),
                        'a' => Some('\u{7}'),
                        'b' => Some('\u{8}'),
                        'e' | 'E' => Some('\u{1b}'),
                        'f' => Some('\u{c}'),
                        'v' => Some('\u{b}'),
                        '\\' | '\'' | '"' | '?' => Some(esc),
                        'x' => self.read_code(16, 2),
                        'u' => self.read_code(16, 4),
                        'U' => self.read_code(16, 8),
                        '0'..='7' => {
                            self.pos -= 1;
                            self.read_code(8, 3)
                        }
                        'c' => {
                            let ctl = self.peek().map(|c| ((c as u32) & 0x1f) as u8 as char);
                            self.pos += 1;
                            ctl
                        }
                        other => {
                            word.text.value.push('\\');
                            Some(other)
                        }
                    };
                    match decoded {
                        Some(ch) => word.text.value.push(ch),
                        None => self.problem("invalid escape in $'…'"),
                    }
                }
                other => word.text.value.push(other),
            }
        }
        self.problem("unterminated $'…' quote");
    }

    fn read_code(&mut self, radix: u32, max_digits: usize) -> Option<char> {
        let mut value: u32 = 0;
        let mut count = 0;
        while count < max_digits {
            let Some(d) = self.peek().and_then(|c| c.to_digit(radix)) else {
                break;
            };
            value = value.saturating_mul(radix).saturating_add(d);
            self.pos += 1;
            count += 1;
        }
        if count == 0 {
            return None;
        }
        char::from_u32(value)
    }

    /// At `$`: a parameter, a substitution or arithmetic.
    fn read_dollar(&mut self, word: &mut Word) {
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => {
                self.pos += 1;
                match self.read_balanced_parens() {
                    // `$((…))` is arithmetic only when the inner `(…)` is one group; bash reads
                    // `$((a) ; (b))` as a command substitution of two subshells.
                    Some(source) if is_one_group(&source) => {
                        let inner = source.get(1..source.len() - 1).unwrap_or("").to_string();
                        self.scan_nested_substitutions(&inner, word);
                    }
                    Some(source) => word.substitutions.push(Substitution {
                        source,
                        process: false,
                    }),
                    None => self.problem("unterminated arithmetic expansion"),
                }
                word.text.value.push(UNRESOLVED);
            }
            Some('(') => {
                self.pos += 1;
                match self.read_balanced_parens() {
                    Some(source) => word.substitutions.push(Substitution {
                        source,
                        process: false,
                    }),
                    None => self.problem("unterminated command substitution"),
                }
                word.text.value.push(UNRESOLVED);
            }
            Some('{') => {
                self.pos += 2;
                let start = self.pos;
                let mut depth = 1usize;
                while let Some(c) = self.peek() {
                    if c == '{' {
                        depth += 1;
                    } else if c == '}' {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    self.pos += 1;
                }
                if self.peek() != Some('}') {
                    self.problem("unterminated ${…}");
                    return;
                }
                let body = self.slice(start, self.pos);
                self.pos += 1;
                if body.contains(['\'', '"']) {
                    // Quotes inside `${…}` can hide the `}` that ends it from this scan.
                    self.problem("quotes inside ${…} are not analysed");
                }
                if body.contains("$(") || body.contains('`') {
                    self.scan_nested_substitutions(&body, word);
                }
                word.text
                    .value
                    .push_str(&known_variable(&body).unwrap_or(UNRESOLVED.to_string()));
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.pos += 1;
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.pos += 1;
                }
                let name = self.slice(start, self.pos);
                word.text
                    .value
                    .push_str(&known_variable(&name).unwrap_or(UNRESOLVED.to_string()));
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 2;
                word.text.value.push(UNRESOLVED);
            }
            _ => {
                word.text.value.push('$');
                self.pos += 1;
            }
        }
    }

    /// At `(`: reads to the matching `)`, honouring quotes, and returns the text between.
    fn read_balanced_parens(&mut self) -> Option<String> {
        self.pos += 1;
        let start = self.pos;
        let mut depth = 1usize;
        while let Some(c) = self.peek() {
            match c {
                '\\' => self.pos += 1,
                '\'' => {
                    self.pos += 1;
                    while self.peek().is_some_and(|c| c != '\'') {
                        self.pos += 1;
                    }
                }
                '"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek() {
                        if c == '\\' {
                            self.pos += 1;
                        } else if c == '"' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        let source = self.slice(start, self.pos);
                        self.pos += 1;
                        return Some(source);
                    }
                }
                // A comment or a here-document inside can hide the `)` that ends it from a
                // scan like this one; bash would read further. Say so rather than guess.
                '#' if self.pos == start
                    || self
                        .chars
                        .at(self.pos - 1)
                        .is_some_and(|p| p.is_whitespace() || p == ';') =>
                {
                    self.problem("a comment inside a substitution is not analysed");
                }
                '<' if self.peek_at(1) == Some('<') => {
                    self.problem("a here-document inside a substitution is not analysed");
                }
                _ => {}
            }
            self.pos += 1;
        }
        None
    }

    fn read_backtick(&mut self, word: &mut Word) {
        self.pos += 1;
        let mut source = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '`' => {
                    word.substitutions.push(Substitution {
                        source,
                        process: false,
                    });
                    word.text.value.push(UNRESOLVED);
                    return;
                }
                '\\' => {
                    if let Some(next) = self.peek() {
                        if !matches!(next, '`' | '\\' | '$') {
                            source.push('\\');
                        }
                        source.push(next);
                        self.pos += 1;
                    }
                }
                other => source.push(other),
            }
        }
        self.problem("unterminated backtick substitution");
    }
}

/// `(…)` whose first `(` closes at the very end (quotes honoured).
fn is_one_group(text: &str) -> bool {
    if !text.starts_with('(') || !text.ends_with(')') {
        return false;
    }
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let last = text.chars().count().saturating_sub(1);
    for (i, c) in text.chars().enumerate() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth = depth.saturating_sub(1);
                if depth == 0 && i != last {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// The variables whose value the roots give us.
fn known_variable(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("~".to_string()),
        "PWD" => Some(".".to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A word's written form is kept only when it differs from its value, however the value
    /// got there; a new value keeps the written form; literalness follows the value.
    #[test]
    fn written_form_and_literalness_follow_the_value() {
        let plain = Word::plain("a");
        assert_eq!(plain, Word::new("a".to_string(), "a".to_string()));
        assert_eq!(plain.raw(), "a");
        let mut word = plain.clone();
        word.set_text("b".to_string());
        assert_eq!((word.text.as_str(), word.raw()), ("b", "a"));
        word.set_text("a".to_string());
        assert_eq!(word, plain);
        word.set_raw("'a'".to_string());
        assert_eq!((word.text.as_str(), word.raw()), ("a", "'a'"));
        word.set_raw("a".to_string());
        assert_eq!(word, plain);
        word.set_text(format!("x{UNRESOLVED}"));
        assert!(!word.is_literal());
        assert_eq!(word.raw(), "a");
        word.set_text("x".to_string());
        assert!(word.is_literal());
        let lexed = lex("a'b' $X c");
        let words: Vec<(&str, &str, bool)> = lexed
            .tokens
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some((w.text.as_str(), w.raw(), w.is_literal())),
                _ => None,
            })
            .collect();
        assert_eq!(
            words,
            vec![
                ("ab", "a'b'", true),
                ("\u{E000}", "$X", false),
                ("c", "c", true)
            ]
        );
    }

    /// An ASCII source read as its bytes lexes as it does read as characters: every string of
    /// up to four characters over the characters the lexer treats specially, and longer forms.
    /// Words compare with what is known of their text (literal, needs no quotes), which the
    /// bytes' lexer finds while reading runs and the characters' lexer by a pass of its own.
    #[test]
    fn bytes_and_characters_lex_alike() {
        let alphabet = [
            '{', '}', ',', '.', ' ', 'a', '\'', '"', '$', '(', ')', '@', '<', '\\', '`', '#', '~',
            '!',
        ];
        let mut sources = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..4 {
            last = last
                .iter()
                .flat_map(|p| alphabet.map(|c| format!("{p}{c}")))
                .collect();
            sources.extend(last.iter().cloned());
        }
        sources.extend(
            [
                "echo {a,b} {1..3} {x} {a b,c}",
                "cat <<EOF\n$(id) `w`\nEOF\necho 'x' \"$y\" $'\\t'",
                "ls @(a|b) !(c) +(d) x*(e) 2>&1 >(tee f) <(g)",
                "a=1 b=$(c \"$(d)\") ((x+1)) 'unterminated",
            ]
            .map(str::to_string),
        );
        for source in &sources {
            let chars: Vec<char> = source.chars().collect();
            let by_bytes = run(Lexer::new(Ascii(source), source.len()));
            let by_chars = run(Lexer::new(chars.as_slice(), source.len()));
            assert_eq!(by_bytes, by_chars, "{source:?}");
        }
    }
}
