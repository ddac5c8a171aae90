import CourierTestSupport
import Foundation
import Testing

/// Every Swift code block of every DocC article and landing page (`Sources/*/*.docc/*.md`) has a word-for-word
/// copy in a test, between `// doc-snippet: <article>` and `// end-doc-snippet` (compared after removing the
/// common indentation), so an article never shows an API that does not compile. The copies live beside the
/// tests of the product they need (`DocArticleSnippetTests` and its siblings in the other test targets).
@Suite(.timeLimit(.minutes(10))) struct DocArticleSnippetCheck {
    @Test func everyArticleCodeBlockIsCompiledInATest() throws {
        let articles = try Self.files(under: "Sources") { $0.pathExtension == "md" && $0.path.contains(".docc/") }
        try #require(!articles.isEmpty, "no DocC articles found under Sources/")
        let tests = try ["Tests", "Demo/Tests", "Demo/Sources/ReadmeSnippets"].flatMap { folder in
            try Self.files(under: folder) { $0.pathExtension == "swift" }
        }
        var compiled: [String: [String]] = [:]           // normalised snippet → where it is
        for file in tests {
            for snippet in try DocSnippets.marked(in: String(contentsOf: file, encoding: .utf8)) {
                compiled[snippet.code, default: []].append("\(file.lastPathComponent) (\(snippet.article))")
            }
        }
        var blocks = 0
        for article in articles {
            for block in try DocSnippets.swiftBlocks(in: String(contentsOf: article, encoding: .utf8)) {
                blocks += 1
                #expect(compiled[block.code] != nil, """
                    \(article.path.replacingOccurrences(of: Repository.root.path + "/", with: "")):\(block.line): \
                    this Swift block has no identical `// doc-snippet:` copy in Tests/:
                    \(block.code)
                    """)
            }
        }
        #expect(blocks >= 20, "only \(blocks) Swift blocks found in the articles")
    }

    /// The same for the README: every Swift block but the package manifest fragment (`// Package.swift`) stands,
    /// token for token (whitespace aside), in compiled code: a test, or the Demo package's `ReadmeSnippets` target,
    /// which `make test` builds (its `main.swift` is the README's first example, marked `// doc-snippet: README`).
    @Test func everyReadmeCodeBlockIsCompiled() throws {
        let readme = Repository.root.appendingPathComponent("README.md")
        let sources = try ["Tests", "Demo/Tests", "Demo/Sources/ReadmeSnippets"].flatMap { folder in
            try Self.files(under: folder) { $0.pathExtension == "swift" }
        }
        let compiled = try sources.map { Self.collapsed(try String(contentsOf: $0, encoding: .utf8)) }
        let blocks = DocSnippets.swiftBlocks(in: try String(contentsOf: readme, encoding: .utf8))
            .filter { !$0.code.hasPrefix("// Package.swift") }
        for block in blocks {
            let code = Self.collapsed(block.code)
            let found = compiled.contains { $0.contains(code) }
            #expect(found, """
                README.md:\(block.line): this Swift block is not in any test or in Demo/Sources/ReadmeSnippets:
                \(block.code)
                """)
        }
        #expect(blocks.count >= 15, "only \(blocks.count) Swift blocks found in the README")
    }

    /// `text` with every run of whitespace made one space.
    static func collapsed(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    @Test func blocksAndMarkersAreFoundAndNormalised() throws {
        let markdown = """
            Text.

            ```swift
                let a = 1
                if a > 0 {
                    print(a)   \("")
                }
            ```

            ```text
            not swift
            ```
            """
        let blocks = DocSnippets.swiftBlocks(in: markdown)
        #expect(blocks.map(\.code) == ["let a = 1\nif a > 0 {\n    print(a)\n}"])
        #expect(blocks.map(\.line) == [3])
        let source = """
            enum X {
                // doc-snippet: Example
                let a = 1
                if a > 0 {
                    print(a)
                }
                // end-doc-snippet
            }
            """
        let marked = try DocSnippets.marked(in: source)
        #expect(marked.map(\.article) == ["Example"])
        #expect(marked.map(\.code) == blocks.map(\.code))
        #expect(throws: DocSnippets.UnclosedSnippet.self) { try DocSnippets.marked(in: "// doc-snippet: A\nlet a = 1\n") }
    }

    static func files(under folder: String, where include: (URL) -> Bool) throws -> [URL] {
        let base = Repository.root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter(include).sorted { $0.path < $1.path }
    }
}

/// Reads Swift code blocks out of Markdown and marked snippets out of Swift sources, normalised alike.
enum DocSnippets {
    struct Block: Equatable {
        var code: String
        var line: Int
    }

    struct Snippet: Equatable {
        var article: String
        var code: String
    }

    struct UnclosedSnippet: Error {
        var article: String
    }

    /// The fenced ```swift blocks of `markdown`, with the line of their opening fence (1-based).
    static func swiftBlocks(in markdown: String) -> [Block] {
        var blocks: [Block] = []
        var open: (fence: String, isSwift: Bool, line: Int, lines: [Substring])?
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let block = open {
                if trimmed == block.fence {
                    if block.isSwift { blocks.append(Block(code: normalise(block.lines), line: block.line)) }
                    open = nil
                } else {
                    open!.lines.append(line)
                }
            } else if trimmed.hasPrefix("```") {
                let fence = String(trimmed.prefix { $0 == "`" })
                let language = trimmed.dropFirst(fence.count).trimmingCharacters(in: .whitespaces)
                open = (fence, language == "swift", index + 1, [])
            }
        }
        return blocks
    }

    /// The regions of `source` between `// doc-snippet: <article>` and `// end-doc-snippet`.
    static func marked(in source: String) throws -> [Snippet] {
        var snippets: [Snippet] = []
        var current: (article: String, lines: [Substring])?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let open = current {
                if trimmed == "// end-doc-snippet" {
                    snippets.append(Snippet(article: open.article, code: normalise(open.lines)))
                    current = nil
                } else {
                    current!.lines.append(line)
                }
            } else if trimmed.hasPrefix("// doc-snippet:") {
                current = (String(trimmed.dropFirst("// doc-snippet:".count)).trimmingCharacters(in: .whitespaces), [])
            }
        }
        if let open = current { throw UnclosedSnippet(article: open.article) }
        return snippets
    }

    /// Trailing spaces and surrounding blank lines removed, and the indentation all lines share.
    static func normalise(_ lines: [Substring]) -> String {
        var lines = lines.map { line -> Substring in
            var line = line
            while line.last == " " || line.last == "\t" || line.last == "\r" { line = line.dropLast() }
            return line
        }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { $0.isEmpty ? "" : String($0.dropFirst(indent)) }.joined(separator: "\n")
    }
}
