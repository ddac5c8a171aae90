import CLibXML2
import Courier

/// libxml2 parser contexts kept for reuse across parses, so that a parse does not create and free one (its
/// dictionary, SAX handler, input and element stacks: about twenty allocations) nor grow the dictionary's
/// names again.
///
/// A context is taken by one parse at a time and handed back when it is done. Only a context whose parse
/// ended well-formed and without failure is kept: a parse stopped on an error, a limit or a refused
/// declaration frees its context, so no half-read state reaches the next document. A kept context is reset
/// (`xmlCtxtReset`: its input freed, its stacks emptied, its error state cleared) before it goes back, and is
/// not kept when its dictionary has grown past ``maximumNames`` (a document of many distinct names leaves
/// nothing large behind). At most ``maximumKept`` contexts are kept.
enum XMLParserPool {
    /// One libxml2 parser context with Courier's SAX handler; freed with the slot.
    final class Slot: @unchecked Sendable {
        let context: xmlParserCtxtPtr
        /// The interning table of the last parse on this context that learned no name, and the token of
        /// the registry it started from (``XMLRegistry/token``): valid while the dictionary lives, for
        /// parses from that registry.
        var nameIDs: XMLNameTable?
        var namesToken = 0

        fileprivate init?(handler: xmlSAXHandler) {
            guard let context = xmlNewParserCtxt() else { return nil }
            // Replace the default SAX2 handler (allocated by the context, freed with it) by ours.
            context.pointee.sax.pointee = handler
            self.context = context
        }

        deinit {
            // libxml2 records internal entity declarations in a document of its own even in SAX mode
            // ("expat compatibility"); it is ours to free.
            if let doc = context.pointee.myDoc {
                xmlFreeDoc(doc)
                context.pointee.myDoc = nil
            }
            xmlFreeParserCtxt(context)
        }

        /// Makes `raw` the context's one input (copied into libxml2's buffer, as `xmlCreateMemoryParserCtxt`
        /// does); `false` when libxml2 cannot allocate it.
        fileprivate func begin(_ raw: UnsafeRawBufferPointer) -> Bool {
            // Set by `XMLBuilder.startDocument` for the previous document; not cleared by `xmlCtxtReset`.
            context.pointee.progressive = 0
            let base = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
            guard let buffer = xmlParserInputBufferCreateMem(base, Int32(raw.count), XML_CHAR_ENCODING_NONE) else {
                return false
            }
            guard let input = xmlNewIOInputStream(context, buffer, XML_CHAR_ENCODING_NONE) else {
                xmlFreeParserInputBuffer(buffer)
                return false
            }
            guard inputPush(context, input) >= 0 else {
                xmlFreeInputStream(input)
                return false
            }
            return true
        }
    }

    /// The most contexts kept.
    static let maximumKept = 8
    /// The most names a kept context's dictionary may hold.
    static let maximumNames = 4096

    private static let kept = Locked<[Slot]>([])

    /// A context reading `raw` with the SAX handler `handler` (which a kept context already has): a kept
    /// one when there is one and `kept` allows it, else a new one. `nil` when libxml2 cannot allocate one.
    static func take(
        reading raw: UnsafeRawBufferPointer, kept allowed: Bool, handler: @autoclosure () -> xmlSAXHandler
    ) -> Slot? {
        let reused = allowed ? kept.withLock { $0.popLast() } : nil
        guard let slot = reused ?? Slot(handler: handler()) else { return nil }
        return slot.begin(raw) ? slot : nil
    }

    /// Hands `slot` back after its parse: kept (reset) when `reusable` and its dictionary is small and
    /// the pool has room, freed otherwise.
    static func give(_ slot: Slot, reusable: Bool) {
        let context = slot.context
        if let doc = context.pointee.myDoc {
            xmlFreeDoc(doc)
            context.pointee.myDoc = nil
        }
        guard reusable, xmlDictSize(context.pointee.dict) <= maximumNames else { return }
        xmlCtxtReset(context)
        // A well-formed parse closed every element, so these are 0 already; `xmlCtxtReset` of some
        // libxml2 versions leaves the namespace stack's count alone.
        context.pointee.nsNr = 0
        context.pointee.userData = nil
        kept.withLock { slots in
            if slots.count < maximumKept { slots.append(slot) }
        }
    }

    /// The number of contexts kept (for tests).
    static var keptCount: Int { kept.withLock { $0.count } }

    /// Frees every kept context.
    static func removeAll() {
        kept.withLock { $0.removeAll() }
    }
}
