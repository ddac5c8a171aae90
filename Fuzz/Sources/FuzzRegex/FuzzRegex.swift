// libFuzzer entry point for the ECMA-262 pattern engine, reached through the public API (the matcher itself
// is internal): the input is a pattern and a string, UTF-8, separated by the first 0x00 byte. Seeds live in
// Fixtures/fuzz/FuzzRegex/ (catastrophic backtracking patterns, deep groups, backreferences, lookaround).
//
// Each pattern is used three ways: as `pattern` against the string, as a `patternProperties` key matched
// against the string as a member name, and as a `format: regex` instance (the syntax check of a pattern
// given as data). Every step either succeeds or throws a CourierError; none may crash, hang (run.sh saves an
// input that runs 10 s as a timeout-* finding) or take unbounded memory; and `isValid` and
// `validationOutcome` agree.
import CourierSchema
import Foundation

private func options(assertFormat: Bool) -> CompiledSchema.Options {
    var options = CompiledSchema.Options()
    options.assertFormat = assertFormat
    return options
}

private func expectCourierError(_ error: any Error, _ stage: String) {
    if !(error is CourierError) { fatalError("\(stage) threw a non-Courier error: \(error)") }
}

/// Compiles `schema` (a CourierError is fine: an invalid pattern) and validates `instance` with it.
private func check(_ schema: Value, _ instance: Value, assertFormat: Bool = false) {
    let compiled: CompiledSchema
    do {
        var registry = SchemaRegistry()
        let uri = try registry.add(schema, uri: "https://courier.example/fuzz/regex.json")
        compiled = try registry.compile(id: uri, options: options(assertFormat: assertFormat))
    } catch {
        expectCourierError(error, "pattern compilation")
        return
    }
    let valid = compiled.isValid(instance)
    let outcome = compiled.validationOutcome(instance)
    if valid != (outcome == .valid) {
        fatalError("isValid says \(valid), validationOutcome says \(outcome)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let split = bytes.firstIndex(of: 0) ?? size
    let pattern = String(decoding: bytes[0..<split], as: UTF8.self)
    let text = split < size ? String(decoding: bytes[(split + 1)...], as: UTF8.self) : ""
    check(.object(["pattern": .string(pattern)]), .string(text))
    check(.object(["patternProperties": .object([pattern: .bool(false)])]), .object([text: .null]))
    check(.object(["format": .string("regex")]), .string(pattern), assertFormat: true)
    return 0
}
