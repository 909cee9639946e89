"""The board in a real browser, over the Chrome DevTools Protocol (run by scripts/browser-test)."""
import asyncio, base64, json, os, shutil, sys, time, urllib.request, uuid
from datetime import datetime, timedelta, timezone

import websockets

BASE, OUT = os.environ["BASE"], os.environ["OUT"]
KEYS = {"pos": os.environ["POS"], "barista": os.environ["BARISTA"], "dashboard": os.environ["DASH"]}
DEADLINE = 30  # seconds; generous, nothing passes or fails on timing


def api(method, path, role, body=None):
    request = urllib.request.Request(BASE + path, method=method, data=json.dumps(body).encode() if body else None, headers={
        "Authorization": "Bearer " + KEYS[role], "Content-Type": "application/json", "Idempotency-Key": str(uuid.uuid4())})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read() or b"{}")


class Page:
    def __init__(self, socket):
        self.socket, self.next = socket, 0

    async def send(self, method, **params):
        self.next += 1
        ident = self.next
        await self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(await self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    async def eval(self, expression):
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result["result"].get("value")

    async def wait(self, expression, what):
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            if await self.eval(expression):
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}")

    async def screenshot(self, name):
        data = (await self.send("Page.captureScreenshot", format="png"))["data"]
        path = os.path.join(OUT, name)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))
        print("saved", path)
        return path


async def main():
    api("PUT", "/v1/stores/market-st", "pos", {"name": "Market St", "timezone": "America/Los_Angeles"})
    # The store's pickup board on a broadcast channel (the built-in simulator answers the channel API).
    api("PUT", "/v1/stores/market-st/broadcast", "pos", {"storage": "none"})
    eta = (datetime.now(timezone.utc) + timedelta(minutes=6)).strftime("%Y-%m-%dT%H:%M:%SZ")
    order = api("POST", "/v1/orders", "pos", {"store_id": "market-st", "pos_ref": "T-77", "display_name": "Ana", "locale": "es",
                                              "items": [{"name": "Oat latte", "size": "grande", "quantity": 1}], "eta": eta})
    oid = order["id"]
    port = os.environ["DEVTOOLS_PORT"]
    targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list").read())
    page_target = next(t for t in targets if t["type"] == "page")
    async with websockets.connect(page_target["webSocketDebuggerUrl"], max_size=None) as socket:
        page = Page(socket)
        await page.send("Page.enable")
        await page.send("Runtime.enable")
        await page.send("Page.navigate", url=f"{BASE}/?store=market-st#key={KEYS['dashboard']}")
        card = f'document.querySelector(\'section[data-state="%s"] article[data-order-id="{oid}"]\')'
        await page.wait(card % "queued" + " !== null", "the card in the queued column")
        await page.wait('document.querySelector("#status").dataset.connected === "true"', "the stream to connect")
        assert await page.eval('location.hash') == "", "the key must leave the address bar"
        await page.screenshot("board-queued.png")

        api("POST", f"/v1/orders/{oid}/events", "barista", {"type": "started", "barista": "Sam"})
        await page.wait(card % "preparing" + " !== null", "the card to move to preparing")
        assert await page.eval(card % "queued" + " === null"), "the card must leave the queued column"

        await page.eval(card % "preparing" + ".click()")
        projection = api("GET", f"/v1/orders/{oid}", "dashboard")["projection"]
        title = json.dumps(projection["lockScreen"]["title"])
        await page.wait(f'[...document.querySelectorAll(\'[data-preview="lock-screen"] [data-field="lock-title"]\')]'
                        f'.map(e => e.textContent).join("|") === [{title}, {title}].join("|")', "lock screen previews (light and dark)")
        for preview in ["compact", "minimal", "expanded", "lock-screen", "watch", "carplay"]:
            count = await page.eval(f'document.querySelectorAll(\'[data-preview="{preview}"]\').length')
            assert count == 2, f"{preview}: {count} previews, expected light and dark"
        status = json.dumps(projection["small"]["status"])
        assert await page.eval(f'document.querySelector(\'[data-field="small-status"]\').textContent === {status}'), "small status"

        # Ready while the details are open: the previews follow.
        api("POST", f"/v1/orders/{oid}/events", "barista", {"type": "ready", "pickup_point": "counter"})
        ready = json.dumps(api("GET", f"/v1/orders/{oid}", "dashboard")["projection"]["lockScreen"]["title"])
        await page.wait(f'document.querySelector(\'[data-field="lock-title"]\').textContent === {ready}', "previews to show ready")
        # The pickup board above the columns shows what the store's broadcast carries.
        board = json.dumps(api("GET", "/v1/stores/market-st/broadcast", "dashboard")["content_state"]["lockScreen"]["title"])
        await page.wait(f'document.querySelector(\'#broadcast [data-field="broadcast-title"]\')?.textContent === {board}',
                        "the pickup board to show the broadcast's title")
        assert "null" not in await page.eval('document.querySelector("#broadcast").textContent'), "the pickup board shows a null"
        shot = await page.screenshot("board-previews.png")
        if os.environ.get("UPDATE_DOCS"):
            shutil.copy(shot, "docs/dashboard.png")
    print("browser test passed: the card moved columns, the previews match the API's projection and the pickup board its broadcast")


asyncio.run(main())
