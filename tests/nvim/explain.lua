-- Headless Neovim explains the autograd graph like a user: open seed 001's program, wait for the findings, ask
-- for the code actions at the failing backward (line 39), pick "Explain autograd graph here", execute its command
-- and show the markdown reply in a floating window (what a user's keymap would do).
-- Results go to $AGL_RESULT as JSON; the exit status says how far it got (0: all steps passed).
local result_path = assert(os.getenv("AGL_RESULT"), "AGL_RESULT is not set")
local python = assert(os.getenv("AGL_PYTHON"), "AGL_PYTHON is not set")
local line = tonumber(os.getenv("AGL_LINE") or "38") -- 0-based
local result = { steps = {} }

local function finish(status)
  result.status = status
  local file = assert(io.open(result_path, "w"))
  file:write(vim.fn.json_encode(result))
  file:close()
  if status == 0 then vim.cmd("qall!") else vim.cmd("cquit " .. status) end
end

local function step(name) table.insert(result.steps, name) end

local function start_client(buf)
  local config = {
    name = "autograd-lsp",
    cmd = { python, "-m", "autograd_lsp", "serve" },
    root_dir = vim.fn.getcwd(),
    init_options = { autogradLsp = { confirm = { enabled = true, timeout = 150 } } },
  }
  if vim.lsp.start then
    return vim.lsp.start(config)
  end
  local id = vim.lsp.start_client(config) -- Neovim 0.7
  vim.lsp.buf_attach_client(buf, id)
  return id
end

local function run()
  local buf = vim.api.nvim_get_current_buf()
  local client_id = start_client(buf)
  if not vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
    result.error = "no diagnostics"
    return finish(4)
  end
  step("diagnostics")

  local client = vim.lsp.get_client_by_id(client_id)
  local uri = vim.uri_from_bufnr(buf)
  local text = vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1]
  local params = {
    textDocument = { uri = uri },
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = #text } },
    context = { diagnostics = {} },
  }
  local responses = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 10000) or {}
  local chosen
  result.actions = {}
  for _, response in pairs(responses) do
    for _, action in ipairs(response.result or {}) do
      table.insert(result.actions, action.title)
      if not chosen and action.title:find("Explain autograd graph here", 1, true) then chosen = action end
    end
  end
  if not chosen or type(chosen.command) ~= "table" then
    result.error = "no Explain action with a command"
    return finish(5)
  end
  result.command = chosen.command
  step("action")

  local reply = client.request_sync("workspace/executeCommand", chosen.command, 240000, buf)
  if not reply or reply.err or not reply.result then
    result.error = "executeCommand failed: " .. vim.inspect(reply and reply.err)
    return finish(6)
  end
  result.reply_status = reply.result.status
  result.markdown = reply.result.markdown
  result.culprit = reply.result.culprit
  step("explained")

  local lines = vim.lsp.util.convert_input_to_markdown_lines(reply.result.markdown)
  local float_buf = vim.lsp.util.open_floating_preview(lines, "markdown", { max_width = 120 })
  result.float_lines = #vim.api.nvim_buf_get_lines(float_buf, 0, -1, false)
  step("shown")

  vim.lsp.stop_client(client_id)
  vim.wait(3000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
  return finish(0)
end

vim.api.nvim_create_autocmd("VimEnter", {
  callback = function()
    local ok, err = pcall(run)
    if not ok then
      result.error = tostring(err)
      finish(3)
    end
  end,
})
