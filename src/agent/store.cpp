// agent/store.cpp — the results database over SQLiteCpp. Every SQLite exception becomes a
// Diagnostic here; nothing escapes.
#include "agent/store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>

#include <filesystem>

namespace nki_agent {

namespace {

// A row of SELECT run_id, key, model, tasks_root, options, created FROM runs.
RunInfo run_of(SQLite::Statement& q) {
  RunInfo r;
  r.run_id = q.getColumn(0).getString();
  r.key = q.getColumn(1).getString();
  r.model = q.getColumn(2).getString();
  r.tasks_root = q.getColumn(3).getString();
  r.options = nlohmann::json::parse(q.getColumn(4).getString(), nullptr, false);
  r.created = q.getColumn(5).getString();
  return r;
}

tl::unexpected<Diagnostic> db_error(const std::string& what, const std::exception& e) {
  return fail("nkia_store_io", fmt::format("results database: {}: {}", what, e.what()));
}

constexpr const char* kRunsSchema = R"(
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  model TEXT NOT NULL,
  tasks_root TEXT NOT NULL,
  options TEXT NOT NULL,
  created TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_key ON runs(key, created);
)";

// The results table of schema 2: keyed by (run, task, sample), with why each episode ended.
constexpr const char* kResultsSchema = R"(
CREATE TABLE IF NOT EXISTS results (
  run_id TEXT NOT NULL REFERENCES runs(run_id),
  task_id TEXT NOT NULL,
  sample INTEGER NOT NULL DEFAULT 0,
  seed INTEGER NOT NULL DEFAULT 0,
  task TEXT NOT NULL,
  level INTEGER NOT NULL,
  category TEXT NOT NULL,
  status TEXT NOT NULL,
  outcome TEXT NOT NULL DEFAULT '',
  check_name TEXT NOT NULL DEFAULT '',
  code TEXT NOT NULL DEFAULT '',
  compiled INTEGER NOT NULL,
  passed INTEGER NOT NULL,
  speedup REAL NOT NULL,
  roofline REAL NOT NULL DEFAULT -1,
  turns INTEGER NOT NULL,
  tool_calls INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  seconds REAL NOT NULL,
  model_seconds REAL NOT NULL DEFAULT 0,
  tool_seconds REAL NOT NULL DEFAULT 0,
  error TEXT NOT NULL,
  kernel TEXT NOT NULL,
  best_kernel_path TEXT NOT NULL DEFAULT '',
  last_kernel_path TEXT NOT NULL DEFAULT '',
  trajectory TEXT NOT NULL,
  result TEXT NOT NULL,
  finished TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (run_id, task_id, sample)
);
)";

// The columns schema 1 had, all of which schema 2 keeps.
constexpr const char* kSchema1Columns =
    "run_id, task_id, task, level, category, status, compiled, passed, speedup, turns, tool_calls, input_tokens, "
    "output_tokens, cost_usd, seconds, error, kernel, trajectory, result, finished";

bool has_column(SQLite::Database& db, const char* table, const char* column) {
  SQLite::Statement q(db, fmt::format("PRAGMA table_info({})", table));
  while (q.executeStep())
    if (q.getColumn(1).getString() == column) return true;
  return false;
}

// Creates the tables, or brings a schema-1 results table (keyed by (run, task)) to schema 2: a
// primary key cannot be altered in SQLite, so the rows move to a new table, as sample 0.
void create_or_migrate(SQLite::Database& db) {
  db.exec(kRunsSchema);
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  if (db.tableExists("results") && !has_column(db, "results", "sample")) {
    db.exec("ALTER TABLE results RENAME TO results_schema1");
    db.exec(kResultsSchema);
    db.exec(fmt::format("INSERT INTO results({0}) SELECT {0} FROM results_schema1", kSchema1Columns));
    db.exec("DROP TABLE results_schema1");
  } else {
    db.exec(kResultsSchema);
  }
  tx.commit();
}

}  // namespace

ResultStore::ResultStore(std::unique_ptr<SQLite::Database> db) : db_(std::move(db)) {}
ResultStore::~ResultStore() = default;

Result<std::unique_ptr<ResultStore>> ResultStore::open_existing(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return tl::unexpected(
        Diagnostic::error("nkia_bad_argument", fmt::format("no results database {}", path),
                          "give the .sqlite file a bench run wrote (--db, default <out>/bench.sqlite)"));
  return open(path);
}

Result<std::unique_ptr<ResultStore>> ResultStore::open(const std::string& path) {
  try {
    std::error_code ec;
    auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    auto db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, 5000);
    db->exec("PRAGMA journal_mode=WAL");
    db->exec("PRAGMA synchronous=NORMAL");
    create_or_migrate(*db);
    return std::unique_ptr<ResultStore>(new ResultStore(std::move(db)));
  } catch (const std::exception& e) {
    return db_error("cannot open " + path, e);
  }
}

Result<void> ResultStore::add_run(const RunInfo& run) {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    SQLite::Statement q(*db_,
                        "INSERT INTO runs(run_id, key, model, tasks_root, options, created) VALUES (?,?,?,?,?,?)");
    q.bind(1, run.run_id);
    q.bind(2, run.key);
    q.bind(3, run.model);
    q.bind(4, run.tasks_root);
    q.bind(5, run.options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    q.bind(6, run.created);
    q.exec();
    return {};
  } catch (const std::exception& e) {
    return db_error("cannot record run " + run.run_id, e);
  }
}

Result<std::optional<RunInfo>> ResultStore::find_run(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    SQLite::Statement q(*db_,
                        "SELECT run_id, key, model, tasks_root, options, created FROM runs WHERE key = ? "
                        "ORDER BY created DESC, rowid DESC LIMIT 1");
    q.bind(1, key);
    if (!q.executeStep()) return std::optional<RunInfo>();
    return std::optional<RunInfo>(run_of(q));
  } catch (const std::exception& e) {
    return db_error("cannot look up runs", e);
  }
}

Result<std::vector<RunInfo>> ResultStore::runs() {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    SQLite::Statement q(
        *db_,
        "SELECT run_id, key, model, tasks_root, options, created FROM runs ORDER BY created DESC, rowid "
        "DESC");
    std::vector<RunInfo> out;
    while (q.executeStep()) {
      out.push_back(run_of(q));
    }
    return out;
  } catch (const std::exception& e) {
    return db_error("cannot list runs", e);
  }
}

Result<void> ResultStore::add_result(const TaskRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    SQLite::Transaction tx(*db_);
    SQLite::Statement q(*db_,
                        "INSERT OR REPLACE INTO results(run_id, task_id, sample, seed, task, level, category, status, "
                        "outcome, check_name, code, compiled, passed, speedup, roofline, turns, tool_calls, "
                        "input_tokens, output_tokens, cost_usd, seconds, model_seconds, tool_seconds, error, kernel, "
                        "best_kernel_path, last_kernel_path, trajectory, result) VALUES "
                        "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    int i = 1;
    q.bind(i++, row.run_id);
    q.bind(i++, row.task_id);
    q.bind(i++, row.sample);
    q.bind(i++, static_cast<int64_t>(row.seed));
    q.bind(i++, row.task);
    q.bind(i++, row.level);
    q.bind(i++, row.category);
    q.bind(i++, row.status);
    q.bind(i++, row.outcome);
    q.bind(i++, row.check);
    q.bind(i++, row.code);
    q.bind(i++, row.compiled ? 1 : 0);
    q.bind(i++, row.passed ? 1 : 0);
    q.bind(i++, row.speedup);
    q.bind(i++, row.roofline);
    q.bind(i++, row.turns);
    q.bind(i++, row.tool_calls);
    q.bind(i++, static_cast<int64_t>(row.input_tokens));
    q.bind(i++, static_cast<int64_t>(row.output_tokens));
    q.bind(i++, row.cost_usd);
    q.bind(i++, row.seconds);
    q.bind(i++, row.model_seconds);
    q.bind(i++, row.tool_seconds);
    q.bind(i++, row.error);
    q.bind(i++, row.kernel);
    q.bind(i++, row.best_kernel_path);
    q.bind(i++, row.last_kernel_path);
    q.bind(i++, row.trajectory);
    q.bind(i++, row.result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    q.exec();
    tx.commit();
    return {};
  } catch (const std::exception& e) {
    return db_error("cannot record the result of " + row.task_id, e);
  }
}

Result<std::set<std::string>> ResultStore::finished_tasks(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    std::set<std::string> done;
    SQLite::Statement q(*db_, "SELECT DISTINCT task_id FROM results WHERE run_id = ? AND status != 'interrupted'");
    q.bind(1, run_id);
    while (q.executeStep()) done.insert(q.getColumn(0).getString());
    return done;
  } catch (const std::exception& e) {
    return db_error("cannot read results", e);
  }
}

Result<std::set<std::pair<std::string, int>>> ResultStore::finished_episodes(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    std::set<std::pair<std::string, int>> done;
    SQLite::Statement q(*db_, "SELECT task_id, sample FROM results WHERE run_id = ? AND status != 'interrupted'");
    q.bind(1, run_id);
    while (q.executeStep()) done.emplace(q.getColumn(0).getString(), q.getColumn(1).getInt());
    return done;
  } catch (const std::exception& e) {
    return db_error("cannot read results", e);
  }
}

Result<std::vector<TaskRow>> ResultStore::results(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    std::vector<TaskRow> rows;
    SQLite::Statement q(
        *db_,
        "SELECT task_id, sample, seed, task, level, category, status, outcome, check_name, code, compiled, passed, "
        "speedup, roofline, turns, tool_calls, input_tokens, output_tokens, cost_usd, seconds, model_seconds, "
        "tool_seconds, error, kernel, best_kernel_path, last_kernel_path, trajectory, result FROM results "
        "WHERE run_id = ? ORDER BY task_id, sample");
    q.bind(1, run_id);
    while (q.executeStep()) {
      TaskRow r;
      r.run_id = run_id;
      int i = 0;
      r.task_id = q.getColumn(i++).getString();
      r.sample = q.getColumn(i++).getInt();
      r.seed = static_cast<uint64_t>(q.getColumn(i++).getInt64());
      r.task = q.getColumn(i++).getString();
      r.level = q.getColumn(i++).getInt();
      r.category = q.getColumn(i++).getString();
      r.status = q.getColumn(i++).getString();
      r.outcome = q.getColumn(i++).getString();
      r.check = q.getColumn(i++).getString();
      r.code = q.getColumn(i++).getString();
      r.compiled = q.getColumn(i++).getInt() != 0;
      r.passed = q.getColumn(i++).getInt() != 0;
      r.speedup = q.getColumn(i++).getDouble();
      r.roofline = q.getColumn(i++).getDouble();
      r.turns = q.getColumn(i++).getInt();
      r.tool_calls = q.getColumn(i++).getInt();
      r.input_tokens = q.getColumn(i++).getInt64();
      r.output_tokens = q.getColumn(i++).getInt64();
      r.cost_usd = q.getColumn(i++).getDouble();
      r.seconds = q.getColumn(i++).getDouble();
      r.model_seconds = q.getColumn(i++).getDouble();
      r.tool_seconds = q.getColumn(i++).getDouble();
      r.error = q.getColumn(i++).getString();
      r.kernel = q.getColumn(i++).getString();
      r.best_kernel_path = q.getColumn(i++).getString();
      r.last_kernel_path = q.getColumn(i++).getString();
      r.trajectory = q.getColumn(i++).getString();
      r.result = nlohmann::json::parse(q.getColumn(i++).getString(), nullptr, false);
      rows.push_back(std::move(r));
    }
    return rows;
  } catch (const std::exception& e) {
    return db_error("cannot read results", e);
  }
}

}  // namespace nki_agent
