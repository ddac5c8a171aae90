/// A check for one `format` value (used when formats assert: ``CompiledSchema/Options/assertFormat``
/// or the format-assertion vocabulary). Unknown formats have no checker and stay annotations.
struct FormatChecker: Sendable {
    let check: @Sendable (String) -> Bool

    init?(name: String, draft: SchemaDraft) {
        switch name {
        case "date-time": check = Formats.isDateTime
        case "date": check = Formats.isDate
        case "time": check = Formats.isTime
        case "duration": check = Formats.isDuration
        case "email": check = { Formats.isEmail($0, international: false) }
        case "idn-email": check = { Formats.isEmail($0, international: true) }
        case "hostname": check = { Formats.isHostname($0, international: false) }
        case "idn-hostname": check = { Formats.isHostname($0, international: true) }
        case "ipv4": check = Formats.isIPv4
        case "ipv6": check = Formats.isIPv6
        case "uri": check = { Formats.isURI($0, reference: false, international: false) }
        case "uri-reference": check = { Formats.isURI($0, reference: true, international: false) }
        case "iri": check = { Formats.isURI($0, reference: false, international: true) }
        case "iri-reference": check = { Formats.isURI($0, reference: true, international: true) }
        case "uri-template": check = Formats.isURITemplate
        case "uuid": check = Formats.isUUID
        case "json-pointer": check = Formats.isJSONPointer
        case "relative-json-pointer": check = Formats.isRelativeJSONPointer
        case "regex": check = { (try? PatternMatcher(ecmaScript: $0)) != nil }
        default: return nil
        }
    }
}

/// The format grammars (RFC 3339, RFC 5321/6531, RFC 1123/5890, RFC 4291, RFC 3986/3987, RFC 6570,
/// RFC 4122, RFC 6901 and the relative JSON Pointer draft), written as small hand parsers.
enum Formats {
    private static func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }
    private static func isHex(_ b: UInt8) -> Bool { isDigit(b) || (b >= 65 && b <= 70) || (b >= 97 && b <= 102) }
    private static func isAlpha(_ b: UInt8) -> Bool { (b >= 65 && b <= 90) || (b >= 97 && b <= 122) }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.allSatisfy(isDigit) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - 48) }
    }

    // MARK: RFC 3339

    static func isDate(_ text: String) -> Bool { date(Array(text.utf8)[...]) }

    private static func date(_ b: ArraySlice<UInt8>) -> Bool {
        guard b.count == 10, b[b.startIndex + 4] == UInt8(ascii: "-"), b[b.startIndex + 7] == UInt8(ascii: "-"),
            let year = number(b.prefix(4)), let month = number(b.dropFirst(5).prefix(2)),
            let day = number(b.dropFirst(8))
        else { return false }
        guard (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= days[month - 1]
    }

    static func isTime(_ text: String) -> Bool { time(Array(text.utf8)[...]) }

    private static func time(_ b: ArraySlice<UInt8>) -> Bool {
        let s = Array(b)
        guard s.count >= 9, s[2] == UInt8(ascii: ":"), s[5] == UInt8(ascii: ":"),
            let hour = number(s[0..<2]), let minute = number(s[3..<5]), let second = number(s[6..<8])
        else { return false }
        var k = 8
        if s[k] == UInt8(ascii: ".") {
            k += 1
            let start = k
            while k < s.count, isDigit(s[k]) { k += 1 }
            guard k > start else { return false }
        }
        guard k < s.count else { return false }
        var offsetMinutes = 0
        switch s[k] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard k + 1 == s.count else { return false }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard s.count == k + 6, s[k + 3] == UInt8(ascii: ":"), let oh = number(s[(k + 1)..<(k + 3)]),
                let om = number(s[(k + 4)..<(k + 6)]), oh <= 23, om <= 59
            else { return false }
            offsetMinutes = (oh * 60 + om) * (s[k] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return false
        }
        guard hour <= 23, minute <= 59, second <= 60 else { return false }
        if second == 60 {
            // A leap second is only ever 23:59:60 UTC.
            let utc = ((hour * 60 + minute - offsetMinutes) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    static func isDateTime(_ text: String) -> Bool {
        let b = Array(text.utf8)
        guard b.count > 11, b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") else { return false }
        return date(b[0..<10]) && time(b[11...])
    }

    /// RFC 3339 appendix A: `P` then date units Y→M→D (contiguous, e.g. not `P1Y2D`), `T` then time
    /// units H→M→S (contiguous), or weeks alone.
    static func isDuration(_ text: String) -> Bool {
        let b = Array(text.utf8)
        guard b.first == UInt8(ascii: "P"), b.count > 1 else { return false }
        var k = 1
        var inTime = false
        var units: [Character] = Array("YMD")
        var previous: Int? = nil
        var sawDate = false
        var sawTime = false
        var sawWeek = false
        while k < b.count {
            if b[k] == UInt8(ascii: "T") {
                guard !inTime else { return false }
                inTime = true
                units = Array("HMS")
                previous = nil
                k += 1
                guard k < b.count else { return false }
                continue
            }
            let start = k
            while k < b.count, isDigit(b[k]) { k += 1 }
            guard k > start, k < b.count else { return false }
            let unit = Character(Unicode.Scalar(b[k]))
            k += 1
            if unit == "W" && !inTime {
                guard !sawDate, !sawWeek, k == b.count else { return false }
                sawWeek = true
                continue
            }
            guard !sawWeek, let position = units.firstIndex(of: unit) else { return false }
            if let previous, position != previous + 1 { return false }
            previous = position
            if inTime { sawTime = true } else { sawDate = true }
        }
        if inTime && !sawTime { return false }
        return sawDate || sawTime || sawWeek
    }

    // MARK: Internet names

    static func isIPv4(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(isDigit) else { return false }
            if part.count > 1 && part.first == UInt8(ascii: "0") { return false }
            guard let n = number(ArraySlice(part)), n <= 255 else { return false }
        }
        return true
    }

    static func isIPv6(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.allSatisfy({ isHex($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
        else { return false }
        var body = Substring(text)
        var groupsNeeded = 8
        if let lastColon = body.lastIndex(of: ":"), body[body.index(after: lastColon)...].contains(".") {
            guard isIPv4(String(body[body.index(after: lastColon)...])) else { return false }
            body = body[...lastColon]
            if !body.hasSuffix("::") { body = body.dropLast() }  // "::1.2.3.4" keeps its "::"
            groupsNeeded = 6
        }
        let halves = body.components(separatedByDoubleColon: ())
        func groups(_ part: Substring) -> Int? {
            if part.isEmpty { return 0 }
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for piece in pieces where piece.isEmpty || piece.count > 4 { return nil }
            return pieces.count
        }
        switch halves.count {
        case 1:
            guard let n = groups(halves[0]) else { return false }
            return n == groupsNeeded
        case 2:
            guard let a = groups(halves[0]), let b = groups(halves[1]) else { return false }
            return a + b < groupsNeeded
        default:
            return false
        }
    }

    /// RFC 1123 host names; A-labels (`xn--`) must be valid Punycode whose U-label passes the IDNA2008
    /// rules (RFC 5891/5892, with the contextual rules of RFC 5892 appendix A). With `international`,
    /// U-labels are accepted directly (`idn-hostname`).
    static func isHostname(_ text: String, international: Bool) -> Bool {
        var name = text
        if international {
            // The label separators of IDNA (U+3002, U+FF0E, U+FF61) count as dots.
            name = String(String.UnicodeScalarView(name.unicodeScalars.map {
                $0 == "\u{3002}" || $0 == "\u{FF0E}" || $0 == "\u{FF61}" ? "." : $0
            }))
        }
        guard !name.isEmpty else { return false }
        var asciiLength = 0
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty else { return false }
            let scalars = Array(label.unicodeScalars)
            if scalars.allSatisfy(\.isASCII) {
                guard scalars.count <= 63, scalars.first != "-", scalars.last != "-" else { return false }
                for scalar in scalars {
                    let b = UInt8(scalar.value)
                    guard isAlpha(b) || isDigit(b) || b == UInt8(ascii: "-") else { return false }
                }
                if scalars.count >= 4, scalars[2] == "-", scalars[3] == "-" {
                    guard scalars[0] == "x" || scalars[0] == "X", scalars[1] == "n" || scalars[1] == "N",
                        let decoded = Punycode.decode(scalars[4...]), !decoded.isEmpty, !decoded.allSatisfy(\.isASCII),
                        isULabel(decoded)
                    else { return false }
                }
                asciiLength += scalars.count + 1
            } else {
                guard international, isULabel(scalars) else { return false }
                asciiLength += 8 + scalars.count  // an estimate of the A-label's length
            }
        }
        return asciiLength - 1 <= 253
    }

    private static func isGreek(_ v: UInt32) -> Bool { (0x0370...0x03FF).contains(v) || (0x1F00...0x1FFF).contains(v) }
    private static func isHebrew(_ v: UInt32) -> Bool { (0x0590...0x05FF).contains(v) }
    private static func isJapanese(_ v: UInt32) -> Bool {
        (0x3040...0x309F).contains(v) || (0x30A0...0x30FF).contains(v) && v != 0x30FB || (0x31F0...0x31FF).contains(v)
            || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v) || (0xF900...0xFAFF).contains(v)
            || (0x20000...0x2FFFF).contains(v)
    }

    /// The IDNA2008 validity of a U-label: no leading combining mark, no `--` in positions 3 and 4, only
    /// PVALID-like code points, and the CONTEXTJ/CONTEXTO rules.
    static func isULabel(_ s: [Unicode.Scalar]) -> Bool {
        guard !s.isEmpty, s.first != "-", s.last != "-" else { return false }
        if s.count >= 4, s[2] == "-", s[3] == "-" { return false }
        switch s[0].properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return false
        default: break
        }
        var arabicIndic = false
        var extendedArabicIndic = false
        // Whether the label has a Japanese character (for U+30FB), found once: a label of many middle dots
        // would otherwise be scanned once per dot.
        var japanese: Bool?
        for (k, scalar) in s.enumerated() {
            let v = scalar.value
            let previous = k > 0 ? s[k - 1] : nil
            let next = k + 1 < s.count ? s[k + 1] : nil
            if scalar.isASCII {
                let b = UInt8(v)
                guard isAlpha(b) || isDigit(b) || b == UInt8(ascii: "-") else { return false }
                continue
            }
            switch v {
            case 0x00B7:
                guard previous == "l", next == "l" else { return false }
                continue
            case 0x0375:
                guard let next, isGreek(next.value) else { return false }
                continue
            case 0x05F3, 0x05F4:
                guard let previous, isHebrew(previous.value) else { return false }
                continue
            case 0x30FB:
                if japanese == nil { japanese = s.contains(where: { isJapanese($0.value) }) }
                guard japanese == true else { return false }
                continue
            case 0x200D:
                guard previous?.properties.canonicalCombiningClass == .virama else { return false }
                continue
            case 0x200C:
                if previous?.properties.canonicalCombiningClass == .virama { continue }
                guard let previous, let next, previous.properties.isAlphabetic, next.properties.isAlphabetic else {
                    return false
                }
                continue
            case 0x0640, 0x07FA, 0x302E, 0x302F, 0x3031...0x3035, 0x303B:
                return false
            case 0x00DF, 0x03C2, 0x06FD, 0x06FE, 0x0F0B, 0x3007:
                continue  // PVALID exceptions of RFC 5892 §2.6
            case 0x0660...0x0669:
                arabicIndic = true
            case 0x06F0...0x06F9:
                extendedArabicIndic = true
            default:
                break
            }
            switch scalar.properties.generalCategory {
            case .spaceSeparator, .lineSeparator, .paragraphSeparator, .control, .format, .privateUse, .surrogate,
                .unassigned, .otherPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
                .finalPunctuation, .dashPunctuation, .connectorPunctuation, .mathSymbol, .currencySymbol,
                .modifierSymbol, .otherSymbol, .uppercaseLetter, .titlecaseLetter:
                return false
            default:
                break
            }
        }
        return !(arabicIndic && extendedArabicIndic)
    }

    /// The non-alphanumeric characters of RFC 5322 `atext`, and the dot of `dot-atom`.
    private static let atextSpecials: Set<UInt8> = Set("!#$%&'*+-/=?^_`{|}~.".utf8)

    static func isEmail(_ text: String, international: Bool) -> Bool {
        // The last "@": in ASCII text each byte is a character, found from the end; otherwise going forward.
        // (`lastIndex(of:)` steps back one character at a time, and a step back over a run of regional
        // indicators, flags, reads the whole run: quadratic.)
        let at: String.Index
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            guard let found = text.utf8.lastIndex(of: UInt8(ascii: "@")) else { return false }
            at = found
        } else {
            var last: String.Index?
            for index in text.indices where text[index] == "@" { last = index }
            guard let found = last else { return false }
            at = found
        }
        let local = text[..<at]
        let domain = text[text.index(after: at)...]
        guard !local.isEmpty, !domain.isEmpty else { return false }
        if local.hasPrefix("\"") {
            guard local.count >= 2, local.hasSuffix("\"") else { return false }
        } else {
            guard !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..") else { return false }
            for scalar in local.unicodeScalars {
                if scalar.isASCII {
                    let b = UInt8(scalar.value)
                    guard isAlpha(b) || isDigit(b) || atextSpecials.contains(b) else { return false }
                } else if !international {
                    return false
                }
            }
        }
        if domain.hasPrefix("[") {
            guard domain.hasSuffix("]") else { return false }
            let literal = domain.dropFirst().dropLast()
            if literal.hasPrefix("IPv6:") { return isIPv6(String(literal.dropFirst(5))) }
            return isIPv4(String(literal))
        }
        return isHostname(String(domain), international: international)
    }

    // MARK: URIs (RFC 3986, RFC 3987)

    static func isURI(_ text: String, reference: Bool, international: Bool) -> Bool {
        let scalars = Array(text.unicodeScalars)
        func allowed(_ s: Unicode.Scalar, extra: String) -> Bool {
            if s.isASCII {
                let b = UInt8(s.value)
                return isAlpha(b) || isDigit(b) || "-._~!$&'()*+,;=".unicodeScalars.contains(s)
                    || extra.unicodeScalars.contains(s)
            }
            return international && s.value >= 0xA0 && s.properties.generalCategory != .control
        }
        func valid(_ part: ArraySlice<Unicode.Scalar>, extra: String) -> Bool {
            var k = part.startIndex
            while k < part.endIndex {
                let s = part[k]
                if s == "%" {
                    guard k + 2 < part.endIndex, part[k + 1].isASCII, part[k + 2].isASCII,
                        isHex(UInt8(part[k + 1].value)), isHex(UInt8(part[k + 2].value))
                    else { return false }
                    k += 3
                    continue
                }
                guard allowed(s, extra: extra) else { return false }
                k += 1
            }
            return true
        }
        var rest = scalars[...]
        // scheme
        var hasScheme = false
        if let colon = rest.firstIndex(of: ":"), let first = rest.first, first.isASCII, isAlpha(UInt8(first.value)),
            rest[..<colon].allSatisfy({ $0.isASCII && (isAlpha(UInt8($0.value)) || isDigit(UInt8($0.value)) || "+-.".unicodeScalars.contains($0)) }),
            !rest[..<colon].contains("/"), !rest[..<colon].contains("?"), !rest[..<colon].contains("#")
        {
            hasScheme = true
            rest = rest[(colon + 1)...]
        }
        if !hasScheme && !reference { return false }
        if !hasScheme, let colon = rest.firstIndex(of: ":") {
            // A relative reference's first segment must not contain ":".
            let firstSegmentEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            if colon < firstSegmentEnd { return false }
        }
        if let hash = rest.firstIndex(of: "#") {
            guard valid(rest[(hash + 1)...], extra: ":@/?") else { return false }
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            guard valid(rest[(question + 1)...], extra: ":@/?") else { return false }
            rest = rest[..<question]
        }
        if rest.starts(with: ["/", "/"]) {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            var authority = rest[..<end]
            rest = rest[end...]
            if let at = authority.lastIndex(of: "@") {
                guard valid(authority[..<at], extra: ":") else { return false }
                authority = authority[(at + 1)...]
            }
            if authority.first == "[" {
                guard let close = authority.firstIndex(of: "]") else { return false }
                let literal = String(String.UnicodeScalarView(authority[(authority.startIndex + 1)..<close]))
                guard isIPv6(literal) || (literal.hasPrefix("v") || literal.hasPrefix("V")) else { return false }
                authority = authority[(close + 1)...]
                if !authority.isEmpty {
                    guard authority.first == ":", authority.dropFirst().allSatisfy({ $0.isASCII && isDigit(UInt8($0.value)) })
                    else { return false }
                }
            } else {
                if let colon = authority.lastIndex(of: ":") {
                    guard authority[(colon + 1)...].allSatisfy({ $0.isASCII && isDigit(UInt8($0.value)) }) else {
                        return false
                    }
                    authority = authority[..<colon]
                }
                guard valid(authority, extra: "") else { return false }
            }
        }
        return valid(rest, extra: ":@/")
    }

    /// RFC 6570: literals without forbidden characters, and `{op? varspec,...}` expressions.
    static func isURITemplate(_ text: String) -> Bool {
        let s = Array(text.unicodeScalars)
        var k = 0
        func pctEncoded(_ at: Int) -> Bool {
            at + 2 < s.count && s[at + 1].isASCII && s[at + 2].isASCII && isHex(UInt8(s[at + 1].value))
                && isHex(UInt8(s[at + 2].value))
        }
        while k < s.count {
            let c = s[k]
            if c == "{" {
                k += 1
                if k < s.count, "+#./;?&".unicodeScalars.contains(s[k]) { k += 1 }
                while true {
                    // varname: varchar *(["."] varchar)
                    var sawChar = false
                    var lastDot = false
                    while k < s.count {
                        let v = s[k]
                        if v.isASCII && (isAlpha(UInt8(v.value)) || isDigit(UInt8(v.value)) || v == "_") {
                            k += 1
                            sawChar = true
                            lastDot = false
                        } else if v == "%" && pctEncoded(k) {
                            k += 3
                            sawChar = true
                            lastDot = false
                        } else if v == "." && sawChar && !lastDot {
                            k += 1
                            lastDot = true
                        } else {
                            break
                        }
                    }
                    guard sawChar, !lastDot, k < s.count else { return false }
                    if s[k] == ":" {
                        k += 1
                        let start = k
                        while k < s.count, s[k].isASCII, isDigit(UInt8(s[k].value)) { k += 1 }
                        guard k > start, k - start <= 4, s[start] != "0" else { return false }
                    } else if s[k] == "*" {
                        k += 1
                    }
                    guard k < s.count else { return false }
                    if s[k] == "," {
                        k += 1
                        continue
                    }
                    guard s[k] == "}" else { return false }
                    k += 1
                    break
                }
                continue
            }
            if c == "%" {
                guard pctEncoded(k) else { return false }
                k += 3
                continue
            }
            if c.value <= 0x20 || c.value == 0x7F || "\"<>\\^`{|}".unicodeScalars.contains(c) { return false }
            k += 1
        }
        return true
    }

    // MARK: Identifiers and pointers

    static func isUUID(_ text: String) -> Bool {
        let b = Array(text.utf8)
        guard b.count == 36 else { return false }
        for (k, c) in b.enumerated() {
            if k == 8 || k == 13 || k == 18 || k == 23 {
                guard c == UInt8(ascii: "-") else { return false }
            } else if !isHex(c) {
                return false
            }
        }
        return true
    }

    static func isJSONPointer(_ text: String) -> Bool {
        if text.isEmpty { return true }
        guard text.hasPrefix("/") else { return false }
        let b = Array(text.utf8)
        for k in b.indices where b[k] == UInt8(ascii: "~") {
            guard k + 1 < b.count, b[k + 1] == UInt8(ascii: "0") || b[k + 1] == UInt8(ascii: "1") else { return false }
        }
        return true
    }

    static func isRelativeJSONPointer(_ text: String) -> Bool {
        let b = Array(text.utf8)
        var k = 0
        while k < b.count, isDigit(b[k]) { k += 1 }
        guard k > 0, !(k > 1 && b[0] == UInt8(ascii: "0")) else { return false }
        let rest = String(decoding: b[k...], as: UTF8.self)
        if rest == "#" { return true }
        // An index manipulation (+n / -n) may follow the prefix.
        var tail = Substring(rest)
        if let sign = tail.first, sign == "+" || sign == "-" {
            tail = tail.dropFirst()
            let digits = tail.prefix(while: { $0.isASCII && $0.isNumber })
            guard !digits.isEmpty, !(digits.count > 1 && digits.first == "0") else { return false }
            tail = tail.dropFirst(digits.count)
            if tail == "#" { return true }
        }
        return isJSONPointer(String(tail))
    }
}

extension Substring {
    /// Splits at "::" (IPv6 zero compression).
    fileprivate func components(separatedByDoubleColon: ()) -> [Substring] {
        var parts: [Substring] = []
        var start = startIndex
        var k = startIndex
        while k < endIndex {
            let next = index(after: k)
            if self[k] == ":", next < endIndex, self[next] == ":" {
                parts.append(self[start..<k])
                k = index(after: next)
                start = k
                continue
            }
            k = next
        }
        parts.append(self[start...])
        return parts
    }
}

/// Punycode (RFC 3492) decoding, for checking A-labels of host names.
enum Punycode {
    static func decode(_ input: ArraySlice<Unicode.Scalar>) -> [Unicode.Scalar]? {
        let base = 36
        let tMin = 1
        let tMax = 26
        let skew = 38
        let damp = 700
        var output: [UInt32] = []
        var rest = input
        if let delimiter = input.lastIndex(of: "-") {
            for scalar in input[..<delimiter] {
                guard scalar.isASCII else { return nil }
                output.append(scalar.value)
            }
            rest = input[(delimiter + 1)...]
            if delimiter == input.startIndex { return nil }
        }
        var n = 128
        var i = 0
        var bias = 72
        var position = rest.startIndex
        while position < rest.endIndex {
            let oldI = i
            var w = 1
            var k = base
            while true {
                guard position < rest.endIndex else { return nil }
                let c = rest[position].value
                position += 1
                let digit: Int
                switch c {
                case 0x61...0x7A: digit = Int(c) - 0x61
                case 0x41...0x5A: digit = Int(c) - 0x41
                case 0x30...0x39: digit = Int(c) - 0x30 + 26
                default: return nil
                }
                let (product, overflow) = digit.multipliedReportingOverflow(by: w)
                guard !overflow, i <= Int(Int32.max) - product else { return nil }
                i += product
                let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if digit < t { break }
                guard w <= Int(Int32.max) / (base - t) else { return nil }
                w *= base - t
                k += base
            }
            let count = output.count + 1
            var delta = oldI == 0 ? (i - oldI) / damp : (i - oldI) / 2
            delta += delta / count
            var kk = 0
            while delta > ((base - tMin) * tMax) / 2 {
                delta /= base - tMin
                kk += base
            }
            bias = kk + (base - tMin + 1) * delta / (delta + skew)
            guard n <= Int(Int32.max) - i / count else { return nil }
            n += i / count
            i %= count
            guard n <= 0x10FFFF, !(0xD800...0xDFFF).contains(n) else { return nil }
            output.insert(UInt32(n), at: i)
            i += 1
        }
        return output.compactMap(Unicode.Scalar.init)
    }
}
