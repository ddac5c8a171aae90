#if Macros
import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in that expands Courier's macros: `@ProtobufModel`.
@main
struct CourierMacrosPluginMain: CompilerPlugin {
    /// The macros this plug-in expands.
    let providingMacros: [any Macro.Type] = [ProtobufModelMacro.self]
}
#else
/// An empty plug-in without the `Macros` trait: swift-syntax is not linked, and the executable still has to link.
@main
struct CourierMacrosPluginMain {
    /// Does nothing.
    static func main() {}
}
#endif
