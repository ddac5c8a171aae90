/// Where a page request starts: the page number, the offset of its first item, or the cursor the previous
/// page returned, and how many items to ask for. A ``Pager`` builds each page's endpoint from one.
///
/// ```swift
/// Endpoint(name: "feed", module: feed, path: "/feed",
///          query: [QueryItem("cursor", request.cursor ?? ""), QueryItem("limit", "\(request.size)")])
/// ```
public struct PageRequest: Sendable, Hashable {
    /// The page number (``Paging/pageNumbers(first:)``), counted as the server counts.
    public var page: Int
    /// The offset of the page's first item (every strategy: the items loaded so far).
    public var offset: Int
    /// Items per page.
    public var size: Int
    /// The cursor or next token the previous page returned (nil for the first page).
    public var cursor: String?
}

/// How a ``Pager`` moves to the next page.
///
/// New cases may be added in later versions: a `switch` over it should have a `default` branch.
public enum Paging: Sendable, Hashable {
    /// Page numbers from `first`: the next request asks for the next number.
    case pageNumbers(first: Int)
    /// Offsets: the next request starts at the number of items loaded so far.
    case offsets
    /// Cursors or next tokens: the next request carries the value at the dotted `path` of the last response
    /// (`data.next_cursor`); a missing, null or empty value means there is no next page.
    case cursor(path: String)
}

/// Pages through a paged endpoint (HHNetworkAPIRecorder): ``refresh()`` loads the first page,
/// ``loadMore()`` the next one, built from the last response (page numbers, offsets or cursors, see
/// ``Paging``); ``hasMore``, ``currentPage`` and ``total`` follow the server's answers. Overlapping
/// ``loadMore()`` calls share one request, and a refresh supersedes a running ``loadMore()``. Items are raw
/// `Value`s (`Pager<Value>`) or decoded into a model.
///
/// ```swift
/// let pager = Pager(client: client, pageSize: 20) { page, size in          // raw items, page numbers
///     Endpoint(name: "users", module: users, path: "/users",
///              query: [QueryItem("page", "\(page)"), QueryItem("size", "\(size)")])
/// }
/// let feed = Pager(client: client, pageSize: 20, decoding: Post.self,
///                  layout: .init(itemsPath: "data.posts"), paging: .cursor(path: "data.next")) { request in
///     Endpoint(name: "feed", module: posts, path: "/feed",
///              query: [QueryItem("after", request.cursor ?? ""), QueryItem("limit", "\(request.size)")])
/// }
/// let first = try await feed.refresh()                  // [Post]
/// while await feed.hasMore { _ = try await feed.loadMore() }
/// ```
public actor Pager<Item: Sendable> {
    /// Where a page's parts are in the decoded response.
    public struct Layout: Sendable {
        /// Dotted path to the page's item array.
        public var itemsPath: String
        /// Dotted path to the total number of items (nil: none).
        public var totalPath: String?
        /// Dotted path to a "has more" boolean (nil: inferred from the cursor, the total or a short page).
        public var hasMorePath: String?
        /// The first page's number (for ``Paging/pageNumbers(first:)`` built by the page-number initialiser).
        public var firstPage: Int

        /// `data.items`, `data.total`, no "has more" field, pages counted from 1.
        public init(itemsPath: String = "data.items", totalPath: String? = "data.total", hasMorePath: String? = nil,
                    firstPage: Int = 1) {
            self.itemsPath = itemsPath
            self.totalPath = totalPath
            self.hasMorePath = hasMorePath
            self.firstPage = firstPage
        }
    }

    /// The client.
    public nonisolated let client: CourierClient
    /// Items per page.
    public nonisolated let pageSize: Int
    /// The layout.
    public nonisolated let layout: Layout
    /// How the next page is asked for.
    public nonisolated let paging: Paging
    private let makeEndpoint: @Sendable (PageRequest) -> Endpoint
    private let decodeItems: @Sendable ([Value]) throws -> [Item]

    /// Every item loaded so far.
    public private(set) var items: [Item] = []
    /// The last page number loaded (nil before the first; with offsets or cursors, pages counted from 1).
    public private(set) var currentPage: Int?
    /// The total the server reported.
    public private(set) var total: Int?
    /// Whether another page is expected.
    public private(set) var hasMore = true
    /// The cursor the last page returned (``Paging/cursor(path:)``).
    public private(set) var nextCursor: String?

    private var loadingMore: SharedLoad?
    private var refreshing: SharedLoad?
    private var generation = 0

    /// A page request the callers waiting for it share. A caller whose task is cancelled stops waiting at once;
    /// the request is cancelled with the last of them (a load nobody waits for is abandoned).
    final class SharedLoad: Sendable {
        let task: Task<[Item], any Error>
        /// The callers waiting, and whether the last of them was cancelled.
        private let waiters = Locked((count: 0, abandoned: false))

        init(_ operation: @escaping @Sendable () async throws -> [Item]) {
            task = Task(operation: operation)
        }

        /// Whether every caller was cancelled, and the request with them.
        var isAbandoned: Bool { waiters.withLock { $0.abandoned } }

        /// The page, or the caller's own cancellation as soon as it comes.
        func value() async throws -> [Item] {
            waiters.withLock { $0.count += 1 }
            let result = await withTaskCancellationHandler {
                await task.resultUnlessCancelled()
            } onCancel: {
                let last = waiters.withLock { waiters -> Bool in
                    waiters.count -= 1
                    if waiters.count == 0 { waiters.abandoned = true }
                    return waiters.abandoned
                }
                if last { task.cancel() }
            }
            guard let result else { throw CourierError(.cancelled, detail: "cancelled while the page loaded") }
            return try result.get()
        }
    }

    init(
        client: CourierClient, pageSize: Int, layout: Layout, paging: Paging,
        decodeItems: @escaping @Sendable ([Value]) throws -> [Item],
        endpoint: @escaping @Sendable (PageRequest) -> Endpoint
    ) {
        self.client = client
        self.pageSize = pageSize
        self.layout = layout
        self.paging = paging
        self.decodeItems = decodeItems
        self.makeEndpoint = endpoint
    }

    /// Loads the first page and replaces the items with it; returns them. Cancels a running ``loadMore()``.
    @discardableResult
    public func refresh() async throws -> [Item] {
        if let refreshing, !refreshing.isAbandoned { return try await refreshing.value() }
        generation += 1
        loadingMore?.task.cancel()
        loadingMore = nil
        let load = SharedLoad { try await self.load(first: true) }
        refreshing = load
        defer { if refreshing === load { refreshing = nil } }
        return try await load.value()
    }

    /// Loads the next page and appends it; returns the new items (none when ``hasMore`` is false).
    /// Calls made while one is running share its request and result.
    @discardableResult
    public func loadMore() async throws -> [Item] {
        if let loadingMore, !loadingMore.isAbandoned { return try await loadingMore.value() }
        if let refreshing, !refreshing.isAbandoned { _ = try await refreshing.value() }
        if let loadingMore, !loadingMore.isAbandoned { return try await loadingMore.value() }
        guard hasMore else { return [] }
        // A load its callers abandoned may still be finishing; it was cancelled, so its page is not kept.
        let first = currentPage == nil
        let load = SharedLoad { try await self.load(first: first) }
        loadingMore = load
        defer { if loadingMore === load { loadingMore = nil } }
        return try await load.value()
    }

    /// Cancels the running page request, if any.
    public func cancel() {
        generation += 1
        loadingMore?.task.cancel()
        refreshing?.task.cancel()
    }

    /// The request of the first page, or of the page after the last one loaded; `nil` after page `Int.max`.
    private func request(first: Bool) -> PageRequest? {
        var number: Int
        switch paging {
        case .pageNumbers(let firstPage): number = firstPage
        case .offsets, .cursor: number = 1
        }
        if !first, let current = currentPage {
            guard current < .max else { return nil }
            number = current + 1
        }
        return PageRequest(page: number, offset: first ? 0 : items.count, size: pageSize,
                           cursor: first ? nil : nextCursor)
    }

    private func load(first: Bool) async throws -> [Item] {
        let started = generation
        guard let request = request(first: first) else {
            hasMore = false
            return []
        }
        let reply = try await client.send(makeEndpoint(request))
        guard started == generation else {
            throw CourierError(.cancelled, detail: "the page request was superseded")
        }
        // Abandoned by every caller (a transport may answer after all): the page is not theirs to keep.
        guard !Task.isCancelled else { throw CourierError(.cancelled, detail: "the page request was cancelled") }
        let value = reply.value
        guard let rawItems = value[path: PathComponent.parse(dotted: layout.itemsPath)]?.arrayValue else {
            throw CourierError(.missingValue, detail: "the page has no item list at \(layout.itemsPath)")
        }
        let pageItems: [Item]
        do {
            pageItems = try decodeItems(rawItems)
        } catch {
            throw CourierError.wrap(error, as: .typeMismatch)
        }
        if first { items = [] }
        items += pageItems
        currentPage = request.page
        if let path = layout.totalPath, let reported = value[path: PathComponent.parse(dotted: path)]?.int64Value {
            total = Int(reported)
        }
        if case .cursor(let path) = paging {
            let cursor = value[path: PathComponent.parse(dotted: path)]
            nextCursor = cursor?.stringValue ?? cursor?.int64Value.map { String($0) }
            if nextCursor?.isEmpty == true { nextCursor = nil }
        }
        if let path = layout.hasMorePath, let flag = value[path: PathComponent.parse(dotted: path)]?.boolValue {
            hasMore = flag
        } else if case .cursor = paging {
            hasMore = nextCursor != nil && !pageItems.isEmpty
        } else if let total {
            hasMore = items.count < total && !pageItems.isEmpty
        } else {
            hasMore = pageItems.count >= pageSize
        }
        return pageItems
    }
}

extension Pager where Item == Value {
    /// A pager of raw items by page numbers, building each page's endpoint with `endpoint(page, size)`.
    public init(
        client: CourierClient, pageSize: Int, layout: Layout = Layout(),
        endpoint: @escaping @Sendable (_ page: Int, _ size: Int) -> Endpoint
    ) {
        self.init(client: client, pageSize: pageSize, layout: layout, paging: .pageNumbers(first: layout.firstPage),
                  decodeItems: { $0 }, endpoint: { endpoint($0.page, $0.size) })
    }

    /// A pager of raw items moving by `paging`, building each page's endpoint from its ``PageRequest``.
    public init(
        client: CourierClient, pageSize: Int, layout: Layout = Layout(), paging: Paging,
        endpoint: @escaping @Sendable (PageRequest) -> Endpoint
    ) {
        self.init(client: client, pageSize: pageSize, layout: layout, paging: paging, decodeItems: { $0 },
                  endpoint: endpoint)
    }
}

extension Pager where Item: Decodable {
    /// A pager whose items are decoded into `type`, moving by `paging` (page numbers from the layout's first
    /// page by default), building each page's endpoint from its ``PageRequest``.
    public init(
        client: CourierClient, pageSize: Int, decoding type: Item.Type, layout: Layout = Layout(), paging: Paging? = nil,
        endpoint: @escaping @Sendable (PageRequest) -> Endpoint
    ) {
        self.init(client: client, pageSize: pageSize, layout: layout,
                  paging: paging ?? .pageNumbers(first: layout.firstPage),
                  decodeItems: { values in try values.map { try ValueDecoder().decode(Item.self, from: $0) } },
                  endpoint: endpoint)
    }
}
