#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One linear pass over a document's bytes that counts the attributes of every start tag and the
/// namespace declarations in scope, before libxml2 sees them: libxml2 2.9 compares each attribute (and
/// namespace declaration) of a start tag with all earlier ones, so a tag with 400,000 attributes costs
/// minutes before the first callback could stop it; and it looks every prefix up, and checks every new
/// declaration, by a scan of all the declarations in scope.
///
/// The scan follows XML's lexical structure only (markup starts at `<`; comments, CDATA sections,
/// processing instructions, declarations and quoted attribute values are skipped whole); it does not
/// validate. In a well-formed start tag every `=` outside quotes separates an attribute name from its
/// value, so their number is the attribute count. Text is skipped with `memchr`.
enum XMLStartTagScanner {
    /// Where a start tag with too many attributes (or one that brings too many namespace declarations into
    /// scope) begins.
    struct Crowded {
        /// The limit it exceeds: `maximumAttributesPerElement` or `maximumNamespacesInScope`.
        var limit: String
        /// The limit's value.
        var value: Int
        /// The tag's name (up to 64 bytes of it).
        var name: String
        /// The 1-based line of its `<`.
        var line: Int
        /// The 1-based column (in bytes) of its `<`.
        var column: Int
        /// The byte offset of its `<` (`nil` when the document was scanned as a UTF-8 copy).
        var offset: Int?
    }

    /// The first crowded start tag of a document in any encoding libxml2 detects: UTF-16 and UTF-32 (whose
    /// code units can hold the bytes of `<`, `"`, `=` and `>`) are scanned as UTF-8 copies, with the
    /// positions of the copy (no byte offset); ASCII-compatible encodings are scanned as they are.
    static func firstCrowdedTagInAnyEncoding(_ bytes: UnsafeBufferPointer<UInt8>, limits: DecodingLimits) -> Crowded? {
        guard let utf8 = asUTF8IfWide(bytes) else { return firstCrowdedTag(bytes, limits: limits) }
        return utf8.withUnsafeBufferPointer { copy in
            guard var crowded = firstCrowdedTag(copy, limits: limits) else { return nil }
            crowded.offset = nil
            return crowded
        }
    }

    /// The document re-encoded as UTF-8 when its first bytes say UTF-16 or UTF-32 (a byte order mark, or
    /// `<` as a wide code unit, as XML 1.0 appendix F detects them); `nil` for every other encoding.
    /// Ill-formed code units become U+FFFD (libxml2 reports them itself).
    static func asUTF8IfWide(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard bytes.count >= 4 else { return nil }
        let b = (bytes[0], bytes[1], bytes[2], bytes[3])
        enum Wide { case utf16(bigEndian: Bool), utf32(bigEndian: Bool) }
        let wide: Wide
        switch b {
        case (0x00, 0x00, 0xFE, 0xFF), (0x00, 0x00, 0x00, 0x3C): wide = .utf32(bigEndian: true)
        case (0xFF, 0xFE, 0x00, 0x00), (0x3C, 0x00, 0x00, 0x00): wide = .utf32(bigEndian: false)
        case (0xFE, 0xFF, _, _), (0x00, 0x3C, _, _): wide = .utf16(bigEndian: true)
        case (0xFF, 0xFE, _, _), (0x3C, 0x00, _, _): wide = .utf16(bigEndian: false)
        default: return nil
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        switch wide {
        case .utf16(let bigEndian):
            let units = (0..<(bytes.count / 2)).lazy.map { i -> UInt16 in
                let high = UInt16(bytes[2 * i + (bigEndian ? 0 : 1)])
                let low = UInt16(bytes[2 * i + (bigEndian ? 1 : 0)])
                return high << 8 | low
            }
            _ = transcode(units.makeIterator(), from: UTF16.self, to: UTF8.self, stoppingOnError: false) {
                out.append($0)
            }
        case .utf32(let bigEndian):
            let units = (0..<(bytes.count / 4)).lazy.map { i -> UInt32 in
                var v: UInt32 = 0
                for k in 0..<4 { v = v << 8 | UInt32(bytes[4 * i + (bigEndian ? k : 3 - k)]) }
                return v
            }
            _ = transcode(units.makeIterator(), from: UTF32.self, to: UTF8.self, stoppingOnError: false) {
                out.append($0)
            }
        }
        return out
    }

    /// The first start tag with more than `limits.maximumAttributesPerElement` attributes, or that makes
    /// more than `limits.maximumNamespacesInScope` namespace declarations visible; `nil` when every tag is
    /// within them (or the document ends inside markup, which libxml2 reports as a syntax error).
    static func firstCrowdedTag(_ bytes: UnsafeBufferPointer<UInt8>, limits: DecodingLimits) -> Crowded? {
        guard let base = bytes.baseAddress else { return nil }
        let n = bytes.count
        let limit = limits.maximumAttributesPerElement
        // A tag needs at least four bytes per attribute (` a=""`): small documents cannot exceed the limits.
        if n / 4 <= min(limit, limits.maximumNamespacesInScope) { return nil }
        // Each attribute counted below has its `=`, and each namespace declaration its `xmlns`: a document
        // with no more of them than the limits allow (as most have) needs no tag-by-tag scan.
        if occurs(UInt8(ascii: "="), atMost: limit, in: bytes),
            occurs("xmlns", atMost: limits.maximumNamespacesInScope, in: bytes)
        {
            return nil
        }
        // Open elements that declare namespaces: (nesting depth, declarations), innermost last. Elements
        // without declarations only move `depth`, so the memory follows the declarations, not the nesting.
        var scopes: [(depth: Int, count: Int)] = []
        var inScope = 0
        var depth = 0
        var i = 0
        while i < n {
            guard let lt = find(UInt8(ascii: "<"), base, from: i, to: n) else { return nil }
            i = lt + 1
            guard i < n else { return nil }
            switch bytes[i] {
            case UInt8(ascii: "!"):
                if starts(with: "--", bytes, at: i + 1) {
                    guard let end = find(sequence: "-->", bytes, from: i + 3) else { return nil }
                    i = end
                } else if starts(with: "[CDATA[", bytes, at: i + 1) {
                    guard let end = find(sequence: "]]>", bytes, from: i + 8) else { return nil }
                    i = end
                } else {
                    guard let end = skipDeclaration(bytes, from: i + 1) else { return nil }
                    i = end
                }
            case UInt8(ascii: "?"):
                guard let end = find(sequence: "?>", bytes, from: i + 1) else { return nil }
                i = end
            case UInt8(ascii: "/"):
                guard let end = find(UInt8(ascii: ">"), base, from: i, to: n) else { return nil }
                i = end + 1
                if let last = scopes.last, last.depth == depth {
                    inScope -= last.count
                    scopes.removeLast()
                }
                depth -= 1
            default:
                var count = 0
                var declarations = 0
                var j = i
                scanning: while j < n {
                    switch bytes[j] {
                    case UInt8(ascii: "\""), UInt8(ascii: "'"):
                        guard let close = find(bytes[j], base, from: j + 1, to: n) else { return nil }
                        j = close + 1
                        continue scanning
                    case UInt8(ascii: "="):
                        count += 1
                        if count > limit {
                            return crowded(bytes, tagAt: lt, "maximumAttributesPerElement", limit)
                        }
                    case UInt8(ascii: "x") where isSpace(bytes[j - 1]) && isNamespaceDeclaration(bytes, at: j):
                        declarations += 1
                    case UInt8(ascii: ">"), UInt8(ascii: "<"):
                        break scanning
                    default:
                        break
                    }
                    j += 1
                }
                if declarations > 0 {
                    inScope += declarations
                    if inScope > limits.maximumNamespacesInScope {
                        return crowded(bytes, tagAt: lt, "maximumNamespacesInScope", limits.maximumNamespacesInScope)
                    }
                }
                let selfClosing = j < n && bytes[j] == UInt8(ascii: ">") && bytes[j - 1] == UInt8(ascii: "/")
                if selfClosing {
                    inScope -= declarations
                } else {
                    depth += 1
                    if declarations > 0 { scopes.append((depth, declarations)) }
                }
                i = j
            }
        }
        return nil
    }

    /// Skips a `<!…>` declaration (a `DOCTYPE` with its internal subset) from just after `<!`: quoted
    /// literals, comments, processing instructions and nested declarations inside `[…]` are skipped whole. Returns the offset after
    /// its `>`.
    private static func skipDeclaration(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let base = bytes.baseAddress!
        var depth = 0
        var j = start
        while j < bytes.count {
            switch bytes[j] {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                guard let close = find(bytes[j], base, from: j + 1, to: bytes.count) else { return nil }
                j = close
            case UInt8(ascii: "<") where starts(with: "!--", bytes, at: j + 1):
                guard let end = find(sequence: "-->", bytes, from: j + 4) else { return nil }
                j = end - 1
            case UInt8(ascii: "<") where starts(with: "?", bytes, at: j + 1):
                guard let end = find(sequence: "?>", bytes, from: j + 2) else { return nil }
                j = end - 1
            case UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: ">") where depth <= 0: return j + 1
            default: break
            }
            j += 1
        }
        return nil
    }

    /// Whether `byte` is XML white space.
    @inline(__always)
    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }

    /// Whether an attribute name at `at` is `xmlns` or `xmlns:…` (a namespace declaration).
    @inline(__always)
    private static func isNamespaceDeclaration(_ bytes: UnsafeBufferPointer<UInt8>, at: Int) -> Bool {
        guard starts(with: "xmlns", bytes, at: at), at + 5 < bytes.count else { return false }
        let next = bytes[at + 5]
        return next == UInt8(ascii: ":") || next == UInt8(ascii: "=") || isSpace(next)
    }

    /// Whether `byte` occurs at most `limit` times in `bytes`: found with `memchr` (vectorised, and most
    /// documents hold few of the bytes counted here), stopping at the first occurrence past the limit.
    private static func occurs(_ byte: UInt8, atMost limit: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var total = 0
        var i = 0
        while let hit = find(byte, base, from: i, to: bytes.count) {
            total += 1
            if total > limit { return false }
            i = hit + 1
        }
        return true
    }

    /// Whether a document is UTF-8 and none of its start tags can have a prefix, a namespace declaration or an
    /// attribute: it starts with `<` (no byte order mark, not UTF-16 or UTF-32), declares no other encoding,
    /// has no `:` at all, and no `=` after its XML declaration (whose pseudo-attributes are not attributes).
    /// libxml2 can then read its tags without namespace processing (see ``XMLBuilder/readsPlainTags``). Text
    /// holding either byte only costs the faster reading.
    static func hasPlainTags(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // UTF-8 (or ASCII) as far as one can tell from the bytes: no byte order mark or wide `<` first, and no
        // other encoding declared.
        guard let base = bytes.baseAddress, bytes.count >= 2, bytes[0] == UInt8(ascii: "<"), bytes[1] != 0 else {
            return false
        }
        if find(UInt8(ascii: ":"), base, from: 0, to: bytes.count) != nil { return false }
        var start = 0
        if starts(with: "<?xml", bytes, at: 0) {
            guard let end = find(sequence: "?>", bytes, from: 5) else { return false }
            let declaration = UnsafeBufferPointer(rebasing: bytes[0..<end])
            if find(sequence: "encoding", declaration, from: 0) != nil,
                find(sequence: "UTF-8", declaration, from: 0) == nil, find(sequence: "utf-8", declaration, from: 0) == nil
            {
                return false
            }
            start = end
        }
        return find(UInt8(ascii: "="), base, from: start, to: bytes.count) == nil
    }

    /// Whether `sequence` occurs at most `limit` times in `bytes`.
    private static func occurs(_ sequence: StaticString, atMost limit: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var count = 0
        var i = 0
        while let after = find(sequence: sequence, bytes, from: i) {
            count += 1
            if count > limit { return false }
            i = after
        }
        return true
    }

    /// The offset of the first `byte` in `base[from..<to]`.
    @inline(__always)
    private static func find(_ byte: UInt8, _ base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, let hit = memchr(base + from, Int32(byte), to - from) else { return nil }
        return UnsafeRawPointer(hit) - UnsafeRawPointer(base)
    }

    /// The offset just after the first occurrence of `sequence` at or after `from`.
    private static func find(sequence: StaticString, _ bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        let first = sequence.utf8Start[0]
        var i = from
        while let hit = find(first, bytes.baseAddress!, from: i, to: bytes.count) {
            if starts(with: sequence, bytes, at: hit) { return hit + sequence.utf8CodeUnitCount }
            i = hit + 1
        }
        return nil
    }

    /// Whether `bytes[at...]` starts with `prefix` (also what ``XMLMapping/equals(_:_:)`` compares).
    @inline(__always)
    static func starts(with prefix: StaticString, _ bytes: UnsafeBufferPointer<UInt8>, at: Int) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard at >= 0, at + count <= bytes.count else { return false }
        for k in 0..<count where bytes[at + k] != prefix.utf8Start[k] { return false }
        return true
    }

    /// The report for the start tag at `offset`: its name, line and column (counted only now).
    private static func crowded(
        _ bytes: UnsafeBufferPointer<UInt8>, tagAt offset: Int, _ limit: String, _ value: Int
    ) -> Crowded {
        var line = 1
        var lineStart = 0
        for k in 0..<offset where bytes[k] == UInt8(ascii: "\n") {
            line += 1
            lineStart = k + 1
        }
        var end = offset + 1
        while end < bytes.count, end - offset <= 64 {
            let c = bytes[end]
            if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r")
                || c == UInt8(ascii: "/") || c == UInt8(ascii: ">")
            {
                break
            }
            end += 1
        }
        let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[(offset + 1)..<end]), as: UTF8.self)
        return Crowded(limit: limit, value: value, name: name, line: line, column: offset - lineStart + 1, offset: offset)
    }
}
