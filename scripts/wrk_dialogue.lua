-- wrk script of scripts/bench_api.py: every connection is one citizen walking whole dialogues.
--
--   wrk -t 50 -c 50 -d 20s -s scripts/wrk_dialogue.lua http://127.0.0.1:PORT -- PLAN MODE 50
--
-- bench_api.py runs wrk with as many threads as connections, so each thread's Lua state
-- drives exactly one connection: request() and response() alternate, and the script
-- knows which citizen a response belongs to. PLAN is a file written by bench_api.py,
-- tab-separated, one record a line:
--
--   D <TAB> business id <TAB> message 1 <TAB> message 2 ...   a dialogue, in order
--   T <TAB> access token                                      a citizen (its own session)
--
-- (the last argument: wrk's thread count, to deal the plan's tokens out). MODE is one of
--   dialogue   POST /api/chat: the citizen sends the turns of every dialogue in order;
--              the last turn of each must answer state "done" in that business, else
--              the dialogue counts as failed; then the next citizen (a new token, so a
--              new session) starts again. A non-2xx answer ends the citizen's walk.
--   get:PATH   GET PATH with the connection's first token (e.g. get:/healthz)
--   post:PATH  POST PATH with the connection's first token and {"message": "从杭州转到苏州"}
--
-- done() prints one line, "WRK_RESULT" and a JSON object: requests, seconds, non-2xx
-- answers, socket errors, dialogues and failed dialogues, latency p50/p99/max in ms.

local threads = {}
local plan_file, mode = nil, nil

local function read_plan(path)
  local dialogues, tokens = {}, {}
  for line in io.lines(path) do
    local fields = {}
    for field in string.gmatch(line, "[^\t]+") do
      fields[#fields + 1] = field
    end
    if fields[1] == "D" then
      local messages = {}
      for i = 3, #fields do
        messages[#messages + 1] = fields[i]
      end
      dialogues[#dialogues + 1] = { business = fields[2], messages = messages }
    elseif fields[1] == "T" then
      tokens[#tokens + 1] = fields[2]
    end
  end
  return dialogues, tokens
end

local function json_string(text)
  return '"' .. text:gsub('[%c"\\]', function(c)
    return string.format("\\u%04x", c:byte())
  end) .. '"'
end

function setup(thread)
  thread:set("id", #threads + 1)
  threads[#threads + 1] = thread
end

-- Per thread (one connection, one citizen at a time) -------------------------------------

local dialogues, tokens, my_tokens = nil, nil, {}
local citizen, dialogue, turn = 0, 1, 1
local method, path, body, headers = nil, nil, nil, nil
requests_sent, non2xx, dialogues_done, dialogues_failed = 0, 0, 0, 0

local function next_citizen()
  citizen = citizen % #my_tokens + 1 -- wraps only if the plan holds too few tokens
  dialogue, turn = 1, 1
  headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. my_tokens[citizen],
  }
end

function init(args)
  plan_file, mode = args[1], args[2] or "dialogue"
  dialogues, tokens = read_plan(plan_file)
  -- this thread's citizens: every n-th token of the plan, so no two connections share one
  local n = tonumber(args[3]) or 1
  local id = wrk.thread:get("id")
  for i = id, #tokens, n do
    my_tokens[#my_tokens + 1] = tokens[i]
  end
  if #my_tokens == 0 then
    my_tokens[1] = tokens[(id - 1) % #tokens + 1]
  end
  next_citizen()
  if mode == "dialogue" then
    method, path = "POST", "/api/chat"
  elseif mode:sub(1, 4) == "get:" then
    method, path = "GET", mode:sub(5)
  elseif mode:sub(1, 5) == "post:" then
    method, path = "POST", mode:sub(6)
    body = '{"message": "从杭州转到苏州"}'
  else
    error("unknown mode " .. mode)
  end
end

function request()
  requests_sent = requests_sent + 1
  if mode == "dialogue" then
    local message = dialogues[dialogue].messages[turn]
    return wrk.format("POST", "/api/chat", headers, '{"message": ' .. json_string(message) .. "}")
  end
  return wrk.format(method, path, headers, body)
end

function response(status, _, answer)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
    if mode == "dialogue" then
      dialogues_done = dialogues_done + 1
      dialogues_failed = dialogues_failed + 1
      next_citizen()
    end
    return
  end
  if mode ~= "dialogue" then
    return
  end
  local current = dialogues[dialogue]
  if turn < #current.messages then
    turn = turn + 1
    return
  end
  dialogues_done = dialogues_done + 1
  local finished = answer:find('"state":"done"', 1, true)
      and answer:find('"id":"' .. current.business .. '"', 1, true)
  if not finished then
    dialogues_failed = dialogues_failed + 1
  end
  if dialogue < #dialogues then
    dialogue, turn = dialogue + 1, 1
  else
    next_citizen()
  end
end

-- Once, after the run ----------------------------------------------------------------------

function done(summary, latency, _)
  local totals = { non2xx = 0, dialogues = 0, failed = 0 }
  for _, thread in ipairs(threads) do
    totals.non2xx = totals.non2xx + (thread:get("non2xx") or 0)
    totals.dialogues = totals.dialogues + (thread:get("dialogues_done") or 0)
    totals.failed = totals.failed + (thread:get("dialogues_failed") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests": %d, "seconds": %.6f, "non2xx": %d, "socket_errors": %d, '
      .. '"timeouts": %d, "dialogues": %d, "failed": %d, "p50_ms": %.3f, "p99_ms": %.3f, '
      .. '"max_ms": %.3f}\n',
    summary.requests, summary.duration / 1e6, totals.non2xx,
    e.connect + e.read + e.write, e.timeout, totals.dialogues, totals.failed,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
