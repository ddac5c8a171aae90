import Courier
import Foundation

/// Validation of the tool's option values and bounded reading of its inputs.
///
/// Every value a person types is checked here before use, so a bad one is a readable usage error
/// (``CourierError/Code/invalidConfiguration``, exit status 18) instead of a trap: numbers must be finite,
/// in range and numeric; `name=value` forms need a name. Inputs (standard input, files) are read in chunks and
/// reading stops one byte past the limit (``CourierError/Code/sizeLimitExceeded``), so an endless input costs
/// at most the limit in memory.
///
/// ```swift
/// let timeout = try Arguments.seconds("1.5", option: "--timeout")          // 1.5 seconds
/// let (name, value) = try Arguments.pair("page=2", option: "--query")      // ("page", "2")
/// let body = try Arguments.read(nil, limit: Arguments.inputLimit, what: "standard input")
/// ```
enum Arguments {
    /// The most a document read from standard input or a file may hold: 128 MiB, the JSON codec's own limit.
    static let inputLimit = 128 << 20
    /// The most a `--config` file may hold: 16 MiB.
    static let configurationLimit = 16 << 20
    /// The longest timeout accepted: one day.
    static let maximumTimeout: Double = 86_400

    /// A usage error about `option`: exit status 18 with `detail` as its message.
    static func usage(_ detail: String) -> CourierError {
        CourierError(.invalidConfiguration, detail: detail)
    }

    /// `text` as a duration in seconds for `option`: a finite decimal number above 0 and at most
    /// ``maximumTimeout``.
    static func seconds(_ text: String, option: String) throws -> Duration {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            throw usage("\(option) needs a number of seconds, not an empty value")
        }
        // Only plain decimal notation: Double("nan"), Double("inf") and hexadecimal floats are refused too.
        let allowed = Set("0123456789.eE+-")
        guard trimmed.allSatisfy(allowed.contains), let value = Double(trimmed) else {
            throw usage("\(option) takes a number of seconds, not '\(text)'")
        }
        guard value.isFinite else {
            throw usage("\(option) must be at most \(Int(maximumTimeout)) seconds, not '\(text)'")
        }
        guard value > 0 else {
            throw usage("\(option) must be more than 0 seconds, not '\(text)'")
        }
        guard value <= maximumTimeout else {
            throw usage("\(option) must be at most \(Int(maximumTimeout)) seconds, not '\(text)'")
        }
        return .nanoseconds(Int64((value * 1e9).rounded()))
    }

    /// `text` as a whole number for `option`, within `range`.
    static func integer(_ text: String, option: String, in range: ClosedRange<Int>) throws -> Int {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            throw usage("\(option) needs a whole number, not an empty value")
        }
        guard let value = Int(trimmed) else {
            let digits = trimmed.drop { $0 == "-" || $0 == "+" }
            if !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) {
                throw usage("\(option) must be between \(range.lowerBound) and \(range.upperBound), not '\(text)'")
            }
            throw usage("\(option) takes a whole number, not '\(text)'")
        }
        guard range.contains(value) else {
            throw usage("\(option) must be between \(range.lowerBound) and \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// `text` split at its first `separator` into a non-empty name and a value for `option`; without the
    /// separator the value is nil when `valueRequired` is false. Names and values keep their text as typed,
    /// except that a header's (`valueRequired`) surrounding spaces are trimmed.
    static func pair(
        _ text: String, separator: Character = "=", option: String, valueRequired: Bool = false
    ) throws -> (name: String, value: String?) {
        let form = "\(option) takes name\(separator)value"
        guard !text.isEmpty else { throw usage("\(form), not an empty value") }
        let name: Substring
        let value: Substring?
        if let index = text.firstIndex(of: separator) {
            name = text[..<index]
            value = text[text.index(after: index)...]
        } else {
            name = Substring(text)
            value = nil
        }
        let cleanName = valueRequired ? name.trimmingCharacters(in: .whitespaces) : String(name)
        guard !cleanName.isEmpty else { throw usage("\(form): '\(text)' has no name") }
        guard let value else {
            if valueRequired { throw usage("\(form): '\(text)' has no '\(separator)'") }
            return (cleanName, nil)
        }
        return (cleanName, valueRequired ? value.trimmingCharacters(in: .whitespaces) : String(value))
    }

    /// The bytes of `path` (standard input for nil or `-`), read in chunks and never more than `limit` + 1:
    /// past `limit` reading stops and the call fails with ``CourierError/Code/sizeLimitExceeded``.
    static func read(_ path: String?, limit: Int, what: String? = nil) throws -> Data {
        let handle: FileHandle
        let name: String
        if let path, path != "-" {
            name = what ?? path
            do {
                handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            } catch {
                throw CourierError(.invalidConfiguration, detail: "cannot read \(name)", underlying: error)
            }
        } else {
            name = what ?? "standard input"
            handle = .standardInput
        }
        defer { if handle !== FileHandle.standardInput { try? handle.close() } }
        var data = Data()
        while data.count <= limit {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: min(1 << 20, limit + 1 - data.count)) ?? Data()
            } catch {
                throw CourierError(.invalidConfiguration, detail: "cannot read \(name)", underlying: error)
            }
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
        throw CourierError(.sizeLimitExceeded,
                           detail: "\(name) is larger than the limit of \(limit) bytes; reading stopped there")
    }
}
