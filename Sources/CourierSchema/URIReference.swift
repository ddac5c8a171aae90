/// A URI reference split into its RFC 3986 components, with reference resolution (§5.2) and
/// dot-segment removal (§5.2.4). Used for `$id`, `$ref` and `$schema`; it never touches the network.
struct URIReference: Hashable, Sendable, CustomStringConvertible {
    var scheme: String?
    var authority: String?
    var path: String
    var query: String?
    var fragment: String?

    /// Splits `text` per RFC 3986 appendix B (the generic regular-expression split, written by hand).
    init(_ text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if let colon = rest.firstIndex(of: ":") {
            let candidate = rest[..<colon]
            if let first = candidate.first, first.isASCII, first.isLetter,
                candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
            {
                scheme = String(candidate)
                rest = rest[rest.index(after: colon)...]
            }
        }
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[..<end])
            rest = rest[end...]
        }
        path = String(rest)
    }

    init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    var isAbsolute: Bool { scheme != nil }

    /// The reference without its fragment.
    var withoutFragment: URIReference {
        var copy = self
        copy.fragment = nil
        return copy
    }

    var description: String {
        var out = ""
        if let scheme { out += scheme + ":" }
        if let authority { out += "//" + authority }
        out += path
        if let query { out += "?" + query }
        if let fragment { out += "#" + fragment }
        return out
    }

    /// Resolves `reference` against `self` as the base URI (RFC 3986 §5.2.2, strict).
    func resolving(_ reference: URIReference) -> URIReference {
        var target = URIReference(scheme: nil, authority: nil, path: "", query: nil, fragment: reference.fragment)
        if let scheme = reference.scheme {
            target.scheme = scheme
            target.authority = reference.authority
            target.path = Self.removeDotSegments(reference.path)
            target.query = reference.query
            return target
        }
        target.scheme = scheme
        if reference.authority != nil {
            target.authority = reference.authority
            target.path = Self.removeDotSegments(reference.path)
            target.query = reference.query
            return target
        }
        target.authority = authority
        if reference.path.isEmpty {
            target.path = path
            target.query = reference.query ?? query
        } else {
            if reference.path.hasPrefix("/") {
                target.path = Self.removeDotSegments(reference.path)
            } else {
                target.path = Self.removeDotSegments(merge(reference.path))
            }
            target.query = reference.query
        }
        return target
    }

    /// Resolves the reference text `text` against this base.
    func resolving(_ text: String) -> URIReference { resolving(URIReference(text)) }

    private func merge(_ referencePath: String) -> String {
        if authority != nil && path.isEmpty { return "/" + referencePath }
        guard let slash = path.lastIndex(of: "/") else { return referencePath }
        return String(path[...slash]) + referencePath
    }

    /// RFC 3986 §5.2.4.
    static func removeDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        var input = Substring(path)
        var output: [Substring] = []
        var result = ""
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                var end = input.index(after: input.startIndex)
                if input.first != "/" { end = input.startIndex }
                let next = input[end...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<next])
                input = input[next...]
            }
        }
        for segment in output { result += segment }
        return result
    }
}

/// JSON Pointer (RFC 6901) helpers.
enum JSONPointer {
    /// Escapes one reference token.
    static func escape(_ token: String) -> String {
        guard token.contains("~") || token.contains("/") else { return token }
        var out = ""
        for c in token {
            switch c {
            case "~": out += "~0"
            case "/": out += "~1"
            default: out.append(c)
            }
        }
        return out
    }

    /// Splits a pointer into unescaped tokens; `nil` when it is not a pointer (does not start with `/`).
    static func tokens(_ pointer: String) -> [String]? {
        if pointer.isEmpty { return [] }
        guard pointer.hasPrefix("/") else { return nil }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { token in
            var text = String(token)
            if text.contains("~") {
                text = text.replacing("~1", with: "/").replacing("~0", with: "~")
            }
            return text
        }
    }
}
