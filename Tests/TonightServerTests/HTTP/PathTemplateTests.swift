import Testing

@testable import TonightServer

@Suite("Which pages the page cache may hold")
struct PathTemplateTests {
    @Test("a template matches its own paths exactly: one non-empty segment per {name}, nothing more")
    func templates() {
        let feed = PathTemplate("/v1/places/{placeId}/posts")
        #expect(feed.matches("/v1/places/p1/posts"))
        #expect(feed.matches("/v1/places/p1/posts"[...]))
        #expect(!feed.matches("/v1/places//posts"))
        #expect(!feed.matches("/v1/places/p1/posts/"))
        #expect(!feed.matches("/v1/places/p1/posts/extra"))
        #expect(!feed.matches("/v1/places/p1"))
        #expect(!feed.matches("/v1/places/p1/comments"))
        #expect(!feed.matches("/health"))
        #expect(!feed.matches(""))
        #expect(PathTemplate("/v1/feeds/trending").matches("/v1/feeds/trending"))
        #expect(!PathTemplate("/v1/feeds/trending").matches("/v1/feeds/trendingx"))
    }

    @Test("the cached reads are the operations the spec marks x-tonight-page-cache, and only GET pages")
    func fromTheSpec() {
        #expect(PageCache.isFeed("/v1/cities/Halifax$Nova%20Scotia$CA/posts"))
        #expect(PageCache.isFeed("/v1/posts/p1/comments"))
        #expect(PageCache.isCached("/v1/artists/suggest"))
        #expect(!PageCache.isFeed("/v1/artists/suggest"))
        #expect(!PageCache.isCached("/v1/posts/p1"))
        #expect(!PageCache.isCached("/v1/me/bookmarks"))
        #expect(!PageCache.isCached("/health"))
    }
}
