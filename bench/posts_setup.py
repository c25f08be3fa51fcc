#!/usr/bin/env python3
"""Sets up the posts benchmarks on a running server (standard library only).

  posts_setup.py --url URL --moderator NAME:PASSWORD --voters N --clips K --image FILE --out DIR

Signs up N voters and an author, creates a place as the moderator, uploads one image post to vote
on and K image posts at the place (the place feed), waits until the server's job worker has
processed them all, and writes DIR/voters.txt (one access token a line), DIR/vote_post.txt (the
post id) and DIR/place_feed.txt (the place feed's request path).
"""
import argparse, concurrent.futures, json, os, time, urllib.request, uuid


def call(url, method, path, body=None, token=None, raw=None, content_type="application/json"):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=60) as response:
        text = response.read()
        return json.loads(text) if text else {}


def signup(url, name):
    return call(url, "POST", "/v1/auth/signup",
                {"username": name, "email": name + "@example.com", "password": "a long enough passphrase"})["accessToken"]


def upload(url, token, image, place):
    boundary = "bench" + uuid.uuid4().hex
    parts = [
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"placeId\"\r\n\r\n{place}\r\n".encode(),
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nFriday night #bench\r\n".encode(),
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"media\"; filename=\"x.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".encode(),
        image, b"\r\n", f"--{boundary}--\r\n".encode(),
    ]
    return call(url, "POST", "/v1/posts", raw=b"".join(parts), token=token,
                content_type="multipart/form-data; boundary=" + boundary)["id"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--moderator", required=True)
    parser.add_argument("--voters", type=int, default=2000)
    parser.add_argument("--clips", type=int, default=40)
    parser.add_argument("--image", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    url = args.url
    name, password = args.moderator.split(":", 1)
    moderator = call(url, "POST", "/v1/auth/login", {"username": name, "password": password})["accessToken"]
    place = call(url, "POST", "/v1/places", {"name": "Bench Club", "category": "nightclub",
                                             "location": {"lat": 44.6488, "lon": -63.5752}}, token=moderator)["id"]
    author = signup(url, "benchauthor")
    image = open(args.image, "rb").read()
    posts = [upload(url, author, image, place) for _ in range(args.clips + 1)]
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        voters = list(pool.map(lambda i: signup(url, f"voter{i}"), range(args.voters)))
    deadline = time.time() + 300
    for post in posts:
        while call(url, "GET", f"/v1/posts/{post}", token=author)["status"] == "processing":
            if time.time() > deadline:
                raise SystemExit(f"post {post} still processing after 300 s")
            time.sleep(0.2)
    os.makedirs(args.out, exist_ok=True)
    open(os.path.join(args.out, "voters.txt"), "w").write("\n".join(voters) + "\n")
    open(os.path.join(args.out, "vote_post.txt"), "w").write(posts[0] + "\n")
    open(os.path.join(args.out, "place_feed.txt"), "w").write(f"/v1/places/{place}/posts\n")
    print(json.dumps({"place": place, "posts": len(posts), "voters": len(voters)}))


if __name__ == "__main__":
    main()
