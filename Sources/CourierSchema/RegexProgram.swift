/// One instruction of a compiled ECMA-262 pattern (a Thompson-NFA program).
///
/// Jump targets (`a`, and `b` of ``Op/split``) are absolute instruction indices once the program is
/// finished; while the compiler emits code they are relative to the instruction itself, so that a
/// fragment can be copied (counted repetition) or moved (alternation, lookbehind) without relocation.
struct RegexInstruction: Sendable {
    /// What an instruction does.
    enum Op: UInt8, Sendable {
        /// Consume the scalar `a`.
        case char
        /// Consume one scalar of the class `classes[a]`.
        case set
        /// Consume, moving left (inside a lookbehind), the scalar `a`.
        case charBack
        /// Consume, moving left (inside a lookbehind), one scalar of the class `classes[a]`.
        case setBack
        /// Continue at `a`, or failing that at `b` (`a` is preferred: greedy or lazy order).
        case split
        /// Continue at `a`.
        case jump
        /// Succeed only at the start of the text (`^`, not multiline).
        case assertStart
        /// Succeed only at the end of the text (`$`, not multiline).
        case assertEnd
        /// Succeed only between a word and a non-word scalar (`\b`, ASCII word characters).
        case wordBoundary
        /// Succeed only where ``wordBoundary`` fails (`\B`).
        case notWordBoundary
        /// Backtracking only: record the current position in capture slot `a`.
        case save
        /// Backtracking only: clear the captures of groups `a...b` (a new iteration of a quantifier).
        case resetCaptures
        /// Backtracking only: record the current position in register `a` (start of an iteration).
        case markPosition
        /// Backtracking only: fail when the position still equals register `a` (an empty iteration).
        case checkProgress
        /// Backtracking only: match the text captured by group `a` again.
        case backReference
        /// Backtracking only: match the text captured by group `a` again, moving left.
        case backReferenceBack
        /// Backtracking only: a lookaround whose body starts at the next instruction and ends with
        /// ``lookEnd``; `b` is its kind (see ``RegexProgram/LookKind``), `a` where to continue.
        case look
        /// Backtracking only: the body of a lookaround matched.
        case lookEnd
        /// The whole pattern matched.
        case match
    }

    /// The operation.
    var op: Op
    /// The first operand (a scalar, a class index, a target, a slot, a register or a group).
    var a: Int
    /// The second operand (the other target of a split, the last group of a reset, a lookaround kind).
    var b: Int

    /// An instruction with its operands.
    init(_ op: Op, _ a: Int = 0, _ b: Int = 0) {
        self.op = op
        self.a = a
        self.b = b
    }

    /// Whether this instruction consumes a scalar (the only instructions a Pike VM keeps in its lists).
    var consumes: Bool { op == .char || op == .set }
}

/// A compiled ECMA-262 pattern: the instructions, the character classes they refer to, and what the
/// matchers need to know to run it.
struct RegexProgram: Sendable {
    /// The kinds of lookaround (the `b` operand of ``RegexInstruction/Op/look``).
    enum LookKind {
        /// `(?=…)`
        static let ahead = 0
        /// `(?!…)`
        static let negativeAhead = 1
        /// `(?<=…)`
        static let behind = 2
        /// `(?<!…)`
        static let negativeBehind = 3
    }

    /// The instructions; execution starts at 0.
    var instructions: [RegexInstruction] = []
    /// The character classes the ``RegexInstruction/Op/set`` instructions refer to.
    var classes: [RegexCharClass] = []
    /// Whether the pattern needs the backtracking matcher (it has backreferences or lookaround).
    var needsBacktracking = false
    /// The number of capture groups (backtracking programs only record them).
    var groupCount = 0
    /// The number of registers the empty-iteration checks use (backtracking programs only).
    var registerCount = 0
    /// Whether every match must start at the beginning of the text (the pattern begins with `^` outside
    /// any alternation), so an unanchored search need not try later starts.
    var anchoredStart = false

    /// Whether the program has no choices (no split or jump) and no backtracking-only instructions, so
    /// one thread per start suffices.
    var isStraightLine = false
    /// The scalars a match can start with, when the program cannot match empty and starts with no
    /// assertion: an unanchored search skips the scalars outside it without running threads.
    var startFilter: RegexStartFilter?
    /// The deterministic automaton for ASCII text, when the program allows one (see ``RegexDFA``).
    var automaton: RegexDFA?

    /// Computes ``startFilter`` from the instructions (absolute jumps).
    mutating func computeStartFilter() {
        guard !needsBacktracking, !anchoredStart else { return }
        var filter = RegexStartFilter()
        var seen = Set<Int>()
        var work = [0]
        while let pc = work.popLast() {
            guard seen.insert(pc).inserted else { continue }
            let instruction = instructions[pc]
            switch instruction.op {
            case .char:
                filter.add(UInt32(instruction.a))
            case .set:
                for v in UInt32(0)..<128 where classes[instruction.a].contains(v) { filter.add(v) }
                filter.nonASCII = true
            case .jump:
                work.append(instruction.a)
            case .split:
                work.append(instruction.a)
                work.append(instruction.b)
            default:
                // A match of the empty string or an assertion: every position may start a match.
                return
            }
        }
        startFilter = filter
    }
}

/// The first scalars of every match of a program (see ``RegexProgram/startFilter``).
struct RegexStartFilter: Sendable {
    /// ASCII members U+0000…U+003F (bit n is U+n).
    private var low: UInt64 = 0
    /// ASCII members U+0040…U+007F (bit n is U+40+n).
    private var high: UInt64 = 0
    /// Whether some non-ASCII scalar may start a match (then every non-ASCII scalar is let through).
    var nonASCII = false

    /// Adds `v` to the possible first scalars.
    mutating func add(_ v: UInt32) {
        if v < 64 {
            low |= 1 << UInt64(v)
        } else if v < 128 {
            high |= 1 << UInt64(v - 64)
        } else {
            nonASCII = true
        }
    }

    /// Whether a match may start with `v` (false for `UInt32.max`, no scalar).
    @inline(__always)
    func mayStart(_ v: UInt32) -> Bool {
        if v < 64 { return low >> UInt64(v) & 1 != 0 }
        if v < 128 { return high >> UInt64(v - 64) & 1 != 0 }
        return nonASCII && v != UInt32.max
    }
}

/// A set of Unicode scalars: a bitmap for ASCII, sorted ranges and Unicode properties beyond it.
struct RegexCharClass: Sendable {
    /// Membership of U+0000…U+003F (bit n is U+n), negation already applied.
    private var asciiLow: UInt64 = 0
    /// Membership of U+0040…U+007F (bit n is U+40+n), negation already applied.
    private var asciiHigh: UInt64 = 0
    /// Sorted, merged, non-overlapping ranges (before negation).
    private(set) var ranges: [ClosedRange<UInt32>] = []
    /// Unicode properties (`\p{…}`/`\P{…}`) whose scalars also belong (before negation).
    private(set) var properties: [RegexProperty] = []
    /// Whether the class is negated (`[^…]`, or `\D`, `\W`, `\S`).
    private(set) var negated = false

    /// A class of `ranges` and `properties`, negated when `negated` is set.
    init(ranges: [ClosedRange<UInt32>], properties: [RegexProperty] = [], negated: Bool = false) {
        self.ranges = Self.merged(ranges)
        self.properties = properties
        self.negated = negated
        for v in UInt32(0)..<128 where slowContains(v) {
            if v < 64 { asciiLow |= 1 << UInt64(v) } else { asciiHigh |= 1 << UInt64(v - 64) }
        }
    }

    /// Whether the scalar `v` belongs to the class.
    @inline(__always)
    func contains(_ v: UInt32) -> Bool {
        if v < 64 { return asciiLow >> UInt64(v) & 1 != 0 }
        if v < 128 { return asciiHigh >> UInt64(v - 64) & 1 != 0 }
        return slowContains(v)
    }

    /// Whether the class has exactly one member, which it returns (a literal in disguise, like `[a]`).
    var singleScalar: UInt32? {
        guard !negated, properties.isEmpty, ranges.count == 1, ranges[0].count == 1 else { return nil }
        return ranges[0].lowerBound
    }

    private func slowContains(_ v: UInt32) -> Bool {
        var low = 0
        var high = ranges.count
        var found = false
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].upperBound < v {
                low = mid + 1
            } else if ranges[mid].lowerBound > v {
                high = mid
            } else {
                found = true
                break
            }
        }
        if !found, !properties.isEmpty, let scalar = Unicode.Scalar(v) {
            found = properties.contains { $0.matches(scalar) }
        }
        return found != negated
    }

    /// `ranges` sorted and merged (overlapping or adjacent ranges become one).
    static func merged(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        var result: [ClosedRange<UInt32>] = []
        for range in sorted {
            if let last = result.last, range.lowerBound <= last.upperBound &+ 1 {
                result[result.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }

    /// The scalars not in `ranges` (which must be merged), as ranges.
    static func complement(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var result: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for range in merged(ranges) {
            if range.lowerBound > next { result.append(next...(range.lowerBound - 1)) }
            next = range.upperBound + 1
        }
        if next <= 0x10FFFF { result.append(next...0x10FFFF) }
        return result
    }

    /// ECMAScript white space and line terminators (`\s`).
    static let whitespace: [ClosedRange<UInt32>] = [
        0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A, 0x2028...0x2029,
        0x202F...0x202F, 0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
    ]
    /// ASCII digits (`\d`).
    static let digits: [ClosedRange<UInt32>] = [0x30...0x39]
    /// ASCII word characters (`\w`).
    static let word: [ClosedRange<UInt32>] = [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A]
    /// Line terminators, which `.` does not match.
    static let lineTerminators: [ClosedRange<UInt32>] = [0x0A...0x0A, 0x0D...0x0D, 0x2028...0x2029]

    /// Whether `v` is an ASCII word character (`\b` and `\B` look at these only).
    @inline(__always)
    static func isWordScalar(_ v: UInt32) -> Bool {
        (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || v == 0x5F || (v >= 0x61 && v <= 0x7A)
    }
}

/// A Unicode property of a `\p{…}` or `\P{…}` escape: a general category (or a group of them) or a
/// binary property.
///
/// Names follow ECMA-262 (`L`, `Letter`, `gc=Lu`, `General_Category=Decimal_Number`, `Alphabetic`,
/// `White_Space`, `Any`, `ASCII`, `Assigned`, …) and, like the `Regex` translation this engine replaced,
/// are matched loosely (case, spaces, `_` and `-` ignored) and include the POSIX names `digit`, `alpha`,
/// `alnum`, `upper`, `lower`, `space`, `punct`, `xdigit` and `cntrl`. Script properties (`sc=`, `scx=`)
/// are not supported: the standard library does not expose script data, and such a pattern is rejected
/// with a ``RegexSyntaxError`` rather than matched wrongly.
struct RegexProperty: Sendable {
    private let test: @Sendable (Unicode.Scalar) -> Bool
    /// Whether the escape was `\P` (the complement).
    let negated: Bool

    /// Whether `scalar` has the property (or, for `\P`, lacks it).
    func matches(_ scalar: Unicode.Scalar) -> Bool { test(scalar) != negated }

    private init(negated: Bool, _ test: @escaping @Sendable (Unicode.Scalar) -> Bool) {
        self.negated = negated
        self.test = test
    }

    /// The property named `name` (the text between the braces), or a syntax error naming it.
    init(named name: String, negated: Bool) throws(RegexSyntaxError) {
        let parts = name.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        if parts.count == 2 {
            let key = Self.loose(parts[0])
            if key == "gc" || key == "generalcategory", let mask = Self.categoryMask(Self.loose(parts[1])) {
                self.init(negated: negated) { mask & Self.bit($0.properties.generalCategory) != 0 }
                return
            }
            if ["sc", "script", "scx", "scriptextensions"].contains(key) {
                throw RegexSyntaxError(reason: "Unicode script properties (\\p{\(name)}) are not supported")
            }
            throw RegexSyntaxError(reason: "unknown Unicode property \\p{\(name)}")
        }
        let key = Self.loose(name)
        if let mask = Self.categoryMask(key) {
            self.init(negated: negated) { mask & Self.bit($0.properties.generalCategory) != 0 }
        } else if let test = Self.binary[key] {
            self.init(negated: negated, test)
        } else {
            throw RegexSyntaxError(reason: "unknown Unicode property \\p{\(name)}")
        }
    }

    private static func loose(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != " " })
    }

    private static func bit(_ category: Unicode.GeneralCategory) -> UInt64 {
        1 << UInt64(categoryIndex(category))
    }

    private static func categoryIndex(_ category: Unicode.GeneralCategory) -> Int {
        switch category {
        case .uppercaseLetter: 0
        case .lowercaseLetter: 1
        case .titlecaseLetter: 2
        case .modifierLetter: 3
        case .otherLetter: 4
        case .nonspacingMark: 5
        case .spacingMark: 6
        case .enclosingMark: 7
        case .decimalNumber: 8
        case .letterNumber: 9
        case .otherNumber: 10
        case .connectorPunctuation: 11
        case .dashPunctuation: 12
        case .openPunctuation: 13
        case .closePunctuation: 14
        case .initialPunctuation: 15
        case .finalPunctuation: 16
        case .otherPunctuation: 17
        case .mathSymbol: 18
        case .currencySymbol: 19
        case .modifierSymbol: 20
        case .otherSymbol: 21
        case .spaceSeparator: 22
        case .lineSeparator: 23
        case .paragraphSeparator: 24
        case .control: 25
        case .format: 26
        case .surrogate: 27
        case .privateUse: 28
        case .unassigned: 29
        @unknown default: 29
        }
    }

    /// General category names (short and long, loosely written) to bit masks over ``categoryIndex(_:)``.
    private static func categoryMask(_ key: String) -> UInt64? {
        let groups: [([String], [Int])] = [
            (["l", "letter"], [0, 1, 2, 3, 4]),
            (["lc", "casedletter"], [0, 1, 2]),
            (["lu", "uppercaseletter"], [0]), (["ll", "lowercaseletter"], [1]), (["lt", "titlecaseletter"], [2]),
            (["lm", "modifierletter"], [3]), (["lo", "otherletter"], [4]),
            (["m", "mark", "combiningmark"], [5, 6, 7]),
            (["mn", "nonspacingmark"], [5]), (["mc", "spacingmark"], [6]), (["me", "enclosingmark"], [7]),
            (["n", "number"], [8, 9, 10]),
            (["nd", "decimalnumber", "digit"], [8]), (["nl", "letternumber"], [9]), (["no", "othernumber"], [10]),
            (["p", "punctuation", "punct"], [11, 12, 13, 14, 15, 16, 17]),
            (["pc", "connectorpunctuation"], [11]), (["pd", "dashpunctuation"], [12]),
            (["ps", "openpunctuation"], [13]), (["pe", "closepunctuation"], [14]),
            (["pi", "initialpunctuation"], [15]), (["pf", "finalpunctuation"], [16]),
            (["po", "otherpunctuation"], [17]),
            (["s", "symbol"], [18, 19, 20, 21]),
            (["sm", "mathsymbol"], [18]), (["sc", "currencysymbol"], [19]), (["sk", "modifiersymbol"], [20]),
            (["so", "othersymbol"], [21]),
            (["z", "separator"], [22, 23, 24]),
            (["zs", "spaceseparator"], [22]), (["zl", "lineseparator"], [23]), (["zp", "paragraphseparator"], [24]),
            (["c", "other"], [25, 26, 27, 28, 29]),
            (["cc", "control", "cntrl"], [25]), (["cf", "format"], [26]), (["cs", "surrogate"], [27]),
            (["co", "privateuse"], [28]), (["cn", "unassigned"], [29]),
        ]
        for (names, bits) in groups where names.contains(key) {
            return bits.reduce(0) { $0 | 1 << UInt64($1) }
        }
        return nil
    }

    /// Binary properties by loose name (long and short ECMA-262 names, plus POSIX names).
    private static let binary: [String: @Sendable (Unicode.Scalar) -> Bool] = {
        var table: [String: @Sendable (Unicode.Scalar) -> Bool] = [:]
        func add(_ names: [String], _ test: @escaping @Sendable (Unicode.Scalar) -> Bool) {
            for name in names { table[loose(name)] = test }
        }
        add(["Any"]) { _ in true }
        add(["ASCII"]) { $0.isASCII }
        add(["Assigned"]) { $0.properties.generalCategory != .unassigned }
        add(["ASCII_Hex_Digit", "AHex"]) { $0.properties.isASCIIHexDigit }
        add(["Alphabetic", "Alpha"]) { $0.properties.isAlphabetic }
        add(["alnum"]) { $0.properties.isAlphabetic || $0.properties.generalCategory == .decimalNumber }
        add(["Bidi_Control", "Bidi_C"]) { $0.properties.isBidiControl }
        add(["Bidi_Mirrored", "Bidi_M"]) { $0.properties.isBidiMirrored }
        add(["Case_Ignorable", "CI"]) { $0.properties.isCaseIgnorable }
        add(["Cased"]) { $0.properties.isCased }
        add(["Changes_When_Casefolded", "CWCF"]) { $0.properties.changesWhenCaseFolded }
        add(["Changes_When_Casemapped", "CWCM"]) { $0.properties.changesWhenCaseMapped }
        add(["Changes_When_Lowercased", "CWL"]) { $0.properties.changesWhenLowercased }
        add(["Changes_When_NFKC_Casefolded", "CWKCF"]) { $0.properties.changesWhenNFKCCaseFolded }
        add(["Changes_When_Titlecased", "CWT"]) { $0.properties.changesWhenTitlecased }
        add(["Changes_When_Uppercased", "CWU"]) { $0.properties.changesWhenUppercased }
        add(["Dash"]) { $0.properties.isDash }
        add(["Default_Ignorable_Code_Point", "DI"]) { $0.properties.isDefaultIgnorableCodePoint }
        add(["Deprecated", "Dep"]) { $0.properties.isDeprecated }
        add(["Diacritic", "Dia"]) { $0.properties.isDiacritic }
        add(["Emoji"]) { $0.properties.isEmoji }
        add(["Emoji_Modifier", "EMod"]) { $0.properties.isEmojiModifier }
        add(["Emoji_Modifier_Base", "EBase"]) { $0.properties.isEmojiModifierBase }
        add(["Emoji_Presentation", "EPres"]) { $0.properties.isEmojiPresentation }
        add(["Extender", "Ext"]) { $0.properties.isExtender }
        add(["Grapheme_Base", "Gr_Base"]) { $0.properties.isGraphemeBase }
        add(["Grapheme_Extend", "Gr_Ext"]) { $0.properties.isGraphemeExtend }
        add(["Hex_Digit", "Hex", "xdigit"]) { $0.properties.isHexDigit }
        add(["IDS_Binary_Operator", "IDSB"]) { $0.properties.isIDSBinaryOperator }
        add(["IDS_Trinary_Operator", "IDST"]) { $0.properties.isIDSTrinaryOperator }
        add(["ID_Continue", "IDC"]) { $0.properties.isIDContinue }
        add(["ID_Start", "IDS"]) { $0.properties.isIDStart }
        add(["Ideographic", "Ideo"]) { $0.properties.isIdeographic }
        add(["Join_Control", "Join_C"]) { $0.properties.isJoinControl }
        add(["Logical_Order_Exception", "LOE"]) { $0.properties.isLogicalOrderException }
        add(["Lowercase", "Lower"]) { $0.properties.isLowercase }
        add(["Math"]) { $0.properties.isMath }
        add(["Noncharacter_Code_Point", "NChar"]) { $0.properties.isNoncharacterCodePoint }
        add(["Pattern_Syntax", "Pat_Syn"]) { $0.properties.isPatternSyntax }
        add(["Pattern_White_Space", "Pat_WS"]) { $0.properties.isPatternWhitespace }
        add(["Quotation_Mark", "QMark"]) { $0.properties.isQuotationMark }
        add(["Radical"]) { $0.properties.isRadical }
        add(["Regional_Indicator", "RI"]) { (0x1F1E6...0x1F1FF).contains($0.value) }
        add(["Sentence_Terminal", "STerm"]) { $0.properties.isSentenceTerminal }
        add(["Soft_Dotted", "SD"]) { $0.properties.isSoftDotted }
        add(["Terminal_Punctuation", "Term"]) { $0.properties.isTerminalPunctuation }
        add(["Unified_Ideograph", "UIdeo"]) { $0.properties.isUnifiedIdeograph }
        add(["Uppercase", "Upper"]) { $0.properties.isUppercase }
        add(["Variation_Selector", "VS"]) { $0.properties.isVariationSelector }
        add(["White_Space", "space"]) { $0.properties.isWhitespace }
        add(["XID_Continue", "XIDC"]) { $0.properties.isXIDContinue }
        add(["XID_Start", "XIDS"]) { $0.properties.isXIDStart }
        return table
    }()
}
