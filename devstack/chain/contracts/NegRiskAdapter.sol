// SPDX-License-Identifier: MIT
// A minimal neg-risk adapter for the local chain. Like Polymarket's NegRiskAdapter it is
// the oracle of its binary conditions, and its outcome tokens are CTF positions whose
// collateral is a wrapped collateral token it alone mints; redeemPositions(conditionId,
// amounts) takes the caller's [yes, no] tokens, redeems them and pays out the underlying
// collateral. Market conversion, fees and the vault of the real adapter are left out.
pragma solidity ^0.8.24;

import {DevToken} from "./DevToken.sol";
import {ConditionalTokens} from "./ConditionalTokens.sol";

contract NegRiskAdapter {
    ConditionalTokens public immutable ctf;
    DevToken public immutable col;
    DevToken public immutable wcol;
    address public immutable admin;

    mapping(bytes32 => uint256) public questionCount;

    event MarketPrepared(bytes32 indexed marketId, address indexed oracle, uint256 feeBips, bytes data);
    event QuestionPrepared(bytes32 indexed marketId, bytes32 indexed questionId, uint256 index, bytes data);
    event OutcomeReported(bytes32 indexed marketId, bytes32 indexed questionId, bool outcome);
    event PositionSplit(address indexed stakeholder, bytes32 indexed conditionId, uint256 amount);
    event PositionsMerge(address indexed stakeholder, bytes32 indexed conditionId, uint256 amount);
    event PayoutRedemption(address indexed redeemer, bytes32 indexed conditionId, uint256[] amounts, uint256 payout);

    constructor(address ctf_, address collateral_) {
        ctf = ConditionalTokens(ctf_);
        col = DevToken(collateral_);
        wcol = new DevToken("Wrapped Collateral", "WCOL", DevToken(collateral_).decimals());
        admin = msg.sender;
        wcol.approve(ctf_, type(uint256).max);
    }

    modifier onlyAdmin() {
        require(msg.sender == admin, "NegRiskAdapter: not admin");
        _;
    }

    // ---- markets and questions ---------------------------------------------------------

    /// A market id has its low byte clear; its questions are the market id plus their index.
    function prepareMarket(uint256 feeBips, bytes calldata data) external onlyAdmin returns (bytes32 marketId) {
        marketId = keccak256(abi.encode(msg.sender, feeBips, data)) & ~bytes32(uint256(0xff));
        require(questionCount[marketId] == 0, "NegRiskAdapter: market already prepared");
        emit MarketPrepared(marketId, msg.sender, feeBips, data);
    }

    function prepareQuestion(bytes32 marketId, bytes calldata data) external onlyAdmin returns (bytes32 questionId) {
        uint256 index = questionCount[marketId];
        require(index < 255, "NegRiskAdapter: too many questions");
        questionId = bytes32(uint256(marketId) | index);
        questionCount[marketId] = index + 1;
        ctf.prepareCondition(address(this), questionId, 2);
        emit QuestionPrepared(marketId, questionId, index, data);
    }

    function reportOutcome(bytes32 questionId, bool outcome) external onlyAdmin {
        uint256[] memory payouts = new uint256[](2);
        payouts[outcome ? 0 : 1] = 1;
        ctf.reportPayouts(questionId, payouts);
        emit OutcomeReported(questionId & ~bytes32(uint256(0xff)), questionId, outcome);
    }

    // ---- ids ---------------------------------------------------------------------------

    function getConditionId(bytes32 questionId) public view returns (bytes32) {
        return ctf.getConditionId(address(this), questionId, 2);
    }

    /// The yes (outcome true, index set 1) or no (index set 2) token of a question.
    function getPositionId(bytes32 questionId, bool outcome) public view returns (uint256) {
        return _positionId(getConditionId(questionId), outcome ? 1 : 2);
    }

    // ---- positions ---------------------------------------------------------------------

    function splitPosition(bytes32 conditionId, uint256 amount) external {
        require(col.transferFrom(msg.sender, address(this), amount), "NegRiskAdapter: collateral transfer failed");
        wcol.mint(address(this), amount);
        ctf.splitPosition(address(wcol), bytes32(0), conditionId, _partition(), amount);
        uint256[] memory amounts = new uint256[](2);
        amounts[0] = amount;
        amounts[1] = amount;
        ctf.safeBatchTransferFrom(address(this), msg.sender, _positionIds(conditionId), amounts, "");
        emit PositionSplit(msg.sender, conditionId, amount);
    }

    function mergePositions(bytes32 conditionId, uint256 amount) external {
        uint256[] memory amounts = new uint256[](2);
        amounts[0] = amount;
        amounts[1] = amount;
        ctf.safeBatchTransferFrom(msg.sender, address(this), _positionIds(conditionId), amounts, "");
        ctf.mergePositions(address(wcol), bytes32(0), conditionId, _partition(), amount);
        _unwrap(msg.sender, amount);
        emit PositionsMerge(msg.sender, conditionId, amount);
    }

    /// Redeem `amounts` = [yes, no] of the caller's tokens (the caller must have approved
    /// this adapter on the CTF) and pay the caller its payout in the underlying collateral.
    function redeemPositions(bytes32 conditionId, uint256[] calldata amounts) external {
        require(amounts.length == 2, "NegRiskAdapter: amounts must be [yes, no]");
        ctf.safeBatchTransferFrom(msg.sender, address(this), _positionIds(conditionId), amounts, "");
        uint256 before = wcol.balanceOf(address(this));
        ctf.redeemPositions(address(wcol), bytes32(0), conditionId, _partition());
        uint256 payout = wcol.balanceOf(address(this)) - before;
        if (payout > 0) _unwrap(msg.sender, payout);
        emit PayoutRedemption(msg.sender, conditionId, amounts, payout);
    }

    function _unwrap(address to, uint256 amount) private {
        wcol.burn(address(this), amount);
        require(col.transfer(to, amount), "NegRiskAdapter: collateral transfer failed");
    }

    function _partition() private pure returns (uint256[] memory partition) {
        partition = new uint256[](2);
        partition[0] = 1;
        partition[1] = 2;
    }

    function _positionId(bytes32 conditionId, uint256 indexSet) private view returns (uint256) {
        return ctf.getPositionId(address(wcol), ctf.getCollectionId(bytes32(0), conditionId, indexSet));
    }

    function _positionIds(bytes32 conditionId) private view returns (uint256[] memory ids) {
        ids = new uint256[](2);
        ids[0] = _positionId(conditionId, 1);
        ids[1] = _positionId(conditionId, 2);
    }

    // ---- ERC-1155 receiver -------------------------------------------------------------

    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external view returns (bytes4) {
        require(msg.sender == address(ctf), "NegRiskAdapter: only CTF tokens");
        return this.onERC1155Received.selector;
    }

    function onERC1155BatchReceived(address, address, uint256[] calldata, uint256[] calldata, bytes calldata)
        external
        view
        returns (bytes4)
    {
        require(msg.sender == address(ctf), "NegRiskAdapter: only CTF tokens");
        return this.onERC1155BatchReceived.selector;
    }
}
