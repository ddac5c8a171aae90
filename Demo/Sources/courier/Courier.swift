import ArgumentParser
import Courier
import CourierResilience
import Foundation

@main
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "Courier: send API calls through an interceptor chain in JSON, XML or Protocol Buffers.",
        discussion: """
            Exit status: 0 on success; for a failed call, 10 + the error category \
            (10 transport, 11 http, 12 decoding, 13 encoding, 14 validation, 15 security, 16 business, \
            17 cancelled, 18 configuration); 18 also for a usage error (an unknown option, a missing or \
            invalid value: a timeout that is not a finite number of seconds in range, a port outside \
            0-65535, a --query or --header without a name). Inputs larger than their limit (128 MiB for a \
            document, 16 MiB for --config) stop being read there and fail with sizeLimitExceeded (12).
            """,
        subcommands: [Demo.self, Send.self, Convert.self, Decode.self, Validate.self, Serve.self])

    /// Runs the command; a usage error (what ArgumentParser reports with `EX_USAGE`, 64) prints its message
    /// and help hint and exits with 18, the configuration category's status, like an invalid option value.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(CourierError.Category.configuration.exitStatus)
            }
            exit(withError: error)
        }
    }
}

/// Prints a failed call's readable error and exits with its category's status.
func fail(_ error: any Error, language: CourierError.Language = .english) -> ExitCode {
    let courier = CourierError.wrap(error, as: .invalidConfiguration)
    var text = "error: \(courier)"
    if language == .simplifiedChinese { text += "\n       \(courier.message(in: .simplifiedChinese))" }
    FileHandle.standardError.write(Data((text + "\n").utf8))
    return ExitCode(courier.category.exitStatus)
}

extension CourierError.Category {
    /// The process exit status `courier` uses for a failed call of this category: 10 + the category's place
    /// (10 transport … 18 configuration), as the command's help states.
    var exitStatus: Int32 {
        switch self {
        case .transport: return 10
        case .http: return 11
        case .decoding: return 12
        case .encoding: return 13
        case .validation: return 14
        case .security: return 15
        case .business: return 16
        case .cancelled: return 17
        case .configuration: return 18
        }
    }
}

/// Renders a value for people: indented JSON.
func render(_ value: Value) -> String {
    var out = ""
    renderValue(value, indent: "", into: &out)
    return out
}

private func renderValue(_ value: Value, indent: String, into out: inout String) {
    switch value {
    case .object(let object):
        guard !object.isEmpty else {
            out += "{}"
            return
        }
        out += "{\n"
        let inner = indent + "  "
        for (i, member) in object.enumerated() {
            out += inner + quoted(member.key) + ": "
            renderValue(member.value, indent: inner, into: &out)
            out += i + 1 < object.count ? ",\n" : "\n"
        }
        out += indent + "}"
    case .array(let array):
        guard !array.isEmpty else {
            out += "[]"
            return
        }
        if array.allSatisfy({ if case .object = $0 { false } else if case .array = $0 { false } else { true } }),
            array.count <= 8
        {
            out += "["
            for (i, element) in array.enumerated() {
                renderValue(element, indent: indent, into: &out)
                if i + 1 < array.count { out += ", " }
            }
            out += "]"
            return
        }
        out += "[\n"
        let inner = indent + "  "
        for (i, element) in array.enumerated() {
            out += inner
            renderValue(element, indent: inner, into: &out)
            out += i + 1 < array.count ? ",\n" : "\n"
        }
        out += indent + "]"
    case .null: out += "null"
    case .bool(let b): out += b ? "true" : "false"
    case .int(let i): out += String(i)
    case .uint(let u): out += String(u)
    case .double(let d): out += d.isFinite ? "\(d)" : "\"\(d)\""
    case .number(let s): out += s
    case .string(let s): out += quoted(s)
    case .bytes(let b): out += quoted("base64:" + Data(b).base64EncodedString())
    }
}

private func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
