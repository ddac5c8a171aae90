/// Why an ECMA-262 pattern was rejected.
struct RegexSyntaxError: Error {
    var reason: String
}

/// A pattern needed more matching work than its budget allows (only patterns with backreferences or
/// lookaround, which no linear-time engine can run, have a budget).
struct RegexBudgetExceeded: Error, Sendable {
    var reason: String
}

/// An ECMA-262 regular expression (JSON Schema's `pattern`, `patternProperties` and `format: regex`)
/// ready to search strings, on Courier's own engine (no `Regex`, no `NSRegularExpression`).
///
/// The pattern is parsed with an explicit stack (any nesting depth) into a Thompson-NFA program
/// (``RegexCompiler``) with ECMAScript meanings: matching over Unicode scalars, `\d` and `\w` ASCII-only,
/// `\s` the ECMAScript white space set, `.` excluding line terminators, `^` and `$` not multiline.
///
/// - Patterns without backreferences or lookaround (nearly all schema patterns) run on a Pike VM
///   (``RegexPikeVM``) in O(text length × program size): `^(a+)+$`, `(a|aa)*b` or `\s*\s*$` cannot
///   backtrack because nothing does. Over ASCII text, a small deterministic automaton built at compile
///   time (``RegexDFA``) answers first when the pattern has one: one table look-up per byte.
/// - Patterns with backreferences (`\1`, `\k<name>`) or lookaround run on a backtracking matcher
///   (``RegexBacktracker``) limited to ``defaultStepBudget`` steps per test unless told otherwise.
///
/// A program holds at most ``RegexCompiler/maxInstructions`` instructions once counted repetitions expand;
/// a larger pattern is rejected with a ``RegexSyntaxError`` ("pattern is too large").
struct PatternMatcher: Sendable {
    /// The steps a backtracking test may take by default (one step per instruction executed): a million,
    /// a few milliseconds of work.
    static let defaultStepBudget = 1_000_000

    private let program: RegexProgram
    /// The steps one test may take when the pattern needs backtracking.
    let stepBudget: Int

    /// Compiles an ECMA-262 pattern; throws why it is invalid (or too large).
    init(ecmaScript source: String, stepBudget: Int = PatternMatcher.defaultStepBudget) throws(RegexSyntaxError) {
        program = try RegexCompiler.compile(source)
        self.stepBudget = stepBudget
    }

    /// Whether the pattern needs the backtracking matcher (and so can exhaust its budget).
    var usesBacktracking: Bool { program.needsBacktracking }

    /// Whether the pattern matches anywhere in `text` (ECMAScript `RegExp.prototype.test`); throws when
    /// the pattern's matching budget runs out before an answer (only patterns with backreferences or
    /// lookaround have a budget).
    func test(_ text: String) throws(RegexBudgetExceeded) -> Bool {
        var steps = 0
        return try test(text, steps: &steps)
    }

    /// ``test(_:)``, adding the work it did to `steps`: the backtracking steps, or the threads the Pike VM
    /// stepped (none when the automaton answered, which reads each byte once).
    func test(_ text: String, steps: inout Int) throws(RegexBudgetExceeded) -> Bool {
        var text = text
        var taken = 0
        let result = text.withUTF8 { bytes -> Result<Bool, RegexBudgetExceeded> in
            if !program.needsBacktracking {
                if let automaton = program.automaton, let found = automaton.search(bytes) { return .success(found) }
                return .success(RegexPikeVM.search(program, in: bytes, work: &taken))
            }
            var matcher = RegexBacktracker(program, text: bytes, budget: stepBudget)
            defer { taken = matcher.stepsTaken }
            do throws(RegexBudgetExceeded) {
                return .success(try matcher.search())
            } catch {
                return .failure(error)
            }
        }
        steps += taken
        return try result.get()
    }

    /// Whether the pattern matches anywhere in `text` (ECMAScript `RegExp.prototype.test`); false when
    /// the budget runs out (use ``test(_:)`` to tell that apart).
    func matches(_ text: String) -> Bool {
        (try? test(text)) ?? false
    }
}
